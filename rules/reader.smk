# Reader: every episode record and native result -> one row per trial (results/trials.parquet
# and .csv), plus the reader's validation: each domain's hand-labelled set
# (config/domains/<domain>/reader_validation/), then the scripted agents' injected failure
# types (a consistency check). Each domain's coordination reference is read only after its lock
# is verified.


rule trials:
    input:
        episodes=get_all_episodes(),
        native=get_all_native(),
        references=per_domain(paths.coordination_file),
        locks_verified=per_domain(paths.locks_verified),
        labelled=get_labelled_fixtures(),
        cards=design_cards(),  # the participant audit
        partitions=per_domain(lambda d: FILES[d].partition),
        arm_registry=ARM_REGISTRY,
    # A failed read (a damaged record stops the reader) leaves the last tables in place
    # (kept_on_failure, rules/common.smk). The reader writes each one whole, and only once every
    # record has been read.
    output:
        **{name: kept_on_failure(path) for name, path in paths.READER_VALIDATION.items()},
        parquet=kept_on_failure(paths.TRIALS_TABLE),
        csv=kept_on_failure(paths.TRIALS_CSV),
    log:
        "logs/trials.log",
    benchmark:
        "benchmarks/trials.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        reader=READER_VERSION,
        domains=",".join(DESIGN.domains),
        # The roots the references and cards sit under (incognita.access.paths), read off them.
        reference_root=lambda w, input: paths.domain_root(input.references[0]),
        cards_root=lambda w, input: paths.domain_root(input.cards[0]),
        # The domains' config folders in the workflow's sources, which every job has: the reader
        # reads each domain's locks.yaml there too, no input here (the lock check's output stands
        # for it), so under a storage provider it has no copy beside the holder maps' (rules/storage.smk).
        # A Path: Snakemake does not compare it with the last run's params.
        config_root=Path(CONFIG_ROOT),
    shell:
        "python -m incognita trials --domains {params.domains} --reference-root {params.reference_root} "
        "--cards-root {params.cards_root} --domains-config {params.config_root} --out {output.parquet} "
        "--csv {output.csv} --validation {output.validation} --arm-registry {input.arm_registry} "
        "{input.episodes} {input.native} > {log} 2>&1"
