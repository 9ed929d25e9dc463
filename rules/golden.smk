# Golden stage: one golden trajectory per task card, each replayed on a clean database and
# compared with upstream's gold-state hash; then the replay table over all tasks.
#
# A job fails when a call argument has no provenance or when the replay does not reproduce
# upstream's hash, so results/golden/replay.tsv only ever lists verified trajectories.
# One job per task keeps invalidation exact (editing one card or repair re-runs one task);
# `incognita golden --cards-dir ... --out-dir ...` builds all of them in one process when
# the per-job start-up cost (~0.8 s of imports) matters more.
#
# Needs from rules/common.smk: get_all_tasks(), SOURCE_DIR; from the config: vocabulary.


rule golden:
    input:
        card="results/cards/{task}.json",
        db=f"{SOURCE_DIR}/db.json",
        vocabulary=config["vocabulary"],
    output:
        "results/golden/{task}.json",
    log:
        "logs/golden/{task}.log",
    conda:
        "../envs/incognita.yaml"
    params:
        generator=GOLDEN_GENERATOR_VERSION,
    shell:
        "python -m incognita golden --card {input.card} --out {output} --db {input.db}"
        " --vocabulary {input.vocabulary} > {log} 2>&1"


rule golden_replay_table:
    input:
        expand("results/golden/{task}.json", task=get_all_tasks()),
    output:
        "results/golden/replay.tsv",
    log:
        "logs/golden/replay.log",
    conda:
        "../envs/incognita.yaml"
    shell:
        "python -m incognita replay-table --out {output} {input} > {log} 2>&1"
