# Golden stage: one golden trajectory per task card, each replayed on a clean database and
# compared with upstream's gold-state hash; then the replay table over all tasks.
#
# A job fails when a call argument has no provenance or when the replay does not reproduce
# upstream's hash, so results/golden/replay.tsv only ever lists verified trajectories.
# One job builds every task's trajectory, one file per task: the retail model and database
# load once instead of once per task (start-up was ~1 s of each per-task job). Every golden
# trajectory feeds the coordination reference, so nothing downstream could re-run per task.
#
# Needs from rules/common.smk: get_all_tasks(), SOURCE_DIR; from the config: vocabulary.


rule golden:
    input:
        cards=expand("results/cards/{task}.json", task=get_all_tasks()),
        db=f"{SOURCE_DIR}/db.json",
        vocabulary=config["vocabulary"],
    output:
        expand("results/golden/{task}.json", task=get_all_tasks()),
    log:
        "logs/golden/golden.log",
    benchmark:
        "benchmarks/golden.tsv"
    # On the chain every episode waits for (rules/cards.smk, `cards`).
    priority: 20
    conda:
        "../envs/incognita.yaml"
    params:
        generator=GOLDEN_GENERATOR_VERSION,
        pairs=lambda w, input, output: " ".join(f"--card {c} --out {o}" for c, o in zip(input.cards, output)),
    shell:
        "python -m incognita golden {params.pairs} --db {input.db}" " --vocabulary {input.vocabulary} > {log} 2>&1"


rule golden_replay_table:
    input:
        expand("results/golden/{task}.json", task=get_all_tasks()),
    output:
        "results/golden/replay.tsv",
    log:
        "logs/golden/replay.log",
    benchmark:
        "benchmarks/golden_replay_table.tsv"
    conda:
        "../envs/incognita.yaml"
    shell:
        "python -m incognita replay-table --out {output} {input} > {log} 2>&1"
