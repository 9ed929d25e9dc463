# Reference stage: the coordination reference and the checks on frozen artifacts.
#
# The coordination reference is rebuilt from the golden trajectories, the cards (for
# withholds_disclosure), the partition and the arm registry, then checked against its lock in
# config/locks.yaml: a change upstream that alters the reference makes this rule fail
# instead of feeding a different reference downstream.
#
# Corpus selection writes config/corpus.yaml, a committed artifact, so it is not a rule:
# a human runs `incognita corpus`, reviews the diff, runs `incognita freeze --bump` and
# commits. The workflow only verifies the locks (rule verify_locks). Selection reads the
# do-nothing table (rule idle) to exclude tasks an agent passes by doing nothing.
#
# Needs get_all_tasks() from rules/common.smk (all source task ids).


rule reference:
    input:
        golden=expand("results/golden/{task}.json", task=get_all_tasks()),
        cards=expand("results/cards/{task}.json", task=get_all_tasks()),
        partition=config["golden"]["partition"],
        arm_registry=ARM_REGISTRY,
        locks="config/locks.yaml",
    output:
        "results/reference/coordination.json",
    log:
        "logs/reference.log",
    benchmark:
        "benchmarks/reference.tsv"
    # On the chain every episode waits for (rules/cards.smk, `cards`).
    priority: 20
    conda:
        "../envs/incognita.yaml"
    params:
        # Only read to print totals over the frozen corpus; not an input of the reference.
        corpus=config["corpus"]["file"],
    shell:
        "python -m incognita reference --golden-dir results/golden --cards-dir results/cards"
        " --partition {input.partition} --arm-registry {input.arm_registry} --out {output} --locks {input.locks}"
        " --corpus {params.corpus} > {log} 2>&1"


# The do-nothing check (incognita/access/selection/idle.py): the idle profile on every task in every arm,
# natively too. Corpus selection reads the table and excludes every task it passes. It is
# not part of the default target: the frozen corpus already records those exclusions.
rule idle:
    input:
        golden=expand("results/golden/{task}.json", task=get_all_tasks()),
        cards=expand("results/cards/{task}.json", task=get_all_tasks()),
        db=f"{SOURCE_DIR}/db.json",
        tasks=f"{SOURCE_DIR}/tasks.json",
        partition=config["golden"]["partition"],
        agents=config["scripted_agents"],
    output:
        "results/reference/idle.tsv",
    log:
        "logs/idle.log",
    benchmark:
        "benchmarks/idle.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        generator=EPISODE_GENERATOR_VERSION,
        prompts=config["prompts"],
    shell:
        "python -m incognita idle --out {output} --cards-dir results/cards --golden-dir results/golden"
        " --db {input.db} --tasks-json {input.tasks} --partition {input.partition}"
        " --prompts {params.prompts} --scripted-agents {input.agents} > {log} 2>&1"


# The oracle check (incognita/access/selection/oracle.py): the oracle profile (told the holders, never slipping)
# on every upstream task in the direct arm, with the first wrong argument of each failure. It
# measures the scripted choosing rules on all 114 tasks, not only the corpus (docs/episodes.md).
rule oracle:
    input:
        golden=expand("results/golden/{task}.json", task=get_all_tasks()),
        cards=expand("results/cards/{task}.json", task=get_all_tasks()),
        db=f"{SOURCE_DIR}/db.json",
        partition=config["golden"]["partition"],
        vocabulary=config["vocabulary"],
        corpus=config["corpus"]["file"],
    output:
        "results/reference/oracle.tsv",
    log:
        "logs/oracle.log",
    benchmark:
        "benchmarks/oracle.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        generator=EPISODE_GENERATOR_VERSION,
        prompts=config["prompts"],
        # The oracle's own profile, not the whole file: editing another profile re-runs nothing here.
        agents=config["scripted_agents"],
        profile=lambda w: json.dumps(_scripted_profiles().get("oracle"), sort_keys=True),
    shell:
        "python -m incognita oracle --out {output} --cards-dir results/cards --golden-dir results/golden"
        " --db {input.db} --partition {input.partition} --prompts {params.prompts}"
        " --scripted-agents {params.agents} --vocabulary {input.vocabulary} --corpus {input.corpus} > {log} 2>&1"


rule verify_locks:
    input:
        reference="results/reference/coordination.json",
        corpus=config["corpus"]["file"],
        locks="config/locks.yaml",
    output:
        "results/reference/locks_verified.txt",
    log:
        "logs/verify_locks.log",
    benchmark:
        "benchmarks/verify_locks.tsv"
    # On the chain every episode waits for (rules/cards.smk, `cards`).
    priority: 20
    conda:
        "../envs/incognita.yaml"
    shell:
        "python -m incognita verify-locks --locks {input.locks} > {log} 2>&1 && cp {log} {output}"
