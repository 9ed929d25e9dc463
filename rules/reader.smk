# Reader: every episode record and native result -> one row per trial (results/trials.parquet
# and .csv), plus the reader's validation: the hand-labelled set (config/reader_validation/), then
# the scripted agents' injected failure types (a consistency check).
# The coordination reference is read only after its lock is verified.


rule trials:
    input:
        episodes=get_all_episodes(),
        native=get_all_native(),
        reference="results/reference/coordination.json",
        locks_verified="results/reference/locks_verified.txt",
        labelled=get_labelled_fixtures(),
        cards=expand("results/cards/{task}.json", task=get_design_tasks()),  # the participant audit
        partition=config["golden"]["partition"],
        arm_registry=ARM_REGISTRY,
    output:
        parquet="results/trials.parquet",
        csv="results/trials.csv",
        validation="results/stats/reader_validation.csv",
        validation_labelled="results/stats/reader_validation_labelled.csv",
        validation_md="results/stats/reader_validation.md",
        fidelity_validation="results/stats/participant_fidelity_validation.csv",
        fidelity_validation_md="results/stats/participant_fidelity_validation.md",
    log:
        "logs/trials.log",
    benchmark:
        "benchmarks/trials.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        reader=READER_VERSION,
        labelled=lambda wildcards, input: Path(input.labelled[0]).parent,
    shell:
        "python -m incognita trials --reference {input.reference} --out {output.parquet} --csv {output.csv} "
        "--validation {output.validation} --labelled {params.labelled} --cards-dir results/cards "
        "--partition {input.partition} --arm-registry {input.arm_registry} {input.episodes} {input.native} > {log} 2>&1"
