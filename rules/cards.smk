rule card:
    input:
        tasks=rules.source.output.tasks,
        db=rules.source.output.db,
        manifest=rules.source.output.manifest,
        repair=get_repair,
    output:
        card="results/cards/{task}.json",
        rule_built="results/cards/v1/{task}.json",
    log:
        "logs/cards/{task}.log",
    conda:
        "../envs/incognita.yaml"
    params:
        source_dir=lambda w, input: os.path.dirname(input.db),
        repairs_dir=REPAIRS_DIR,
        out_dir=lambda w, output: os.path.dirname(output.card),
        version=config["source"]["version"],
        builder=CARD_BUILDER_VERSION,
    shell:
        "python -m incognita cards --source-dir {params.source_dir} --version {params.version} "
        "--repairs-dir {params.repairs_dir} --out-dir {params.out_dir} {wildcards.task} > {log} 2>&1"


rule audit:
    input:
        cards=expand("results/cards/{task}.json", task=get_all_tasks()),
        rule_built=expand("results/cards/v1/{task}.json", task=get_repaired_tasks()),
        db=rules.source.output.db,
        vocabulary=config["vocabulary"],
        ambiguities="config/upstream_ambiguities.yaml",
    output:
        "results/audit/cards.tsv",
    log:
        "logs/audit.log",
    conda:
        "../envs/incognita.yaml"
    params:
        source_dir=lambda w, input: os.path.dirname(input.db),
    shell:
        "python -m incognita audit --source-dir {params.source_dir} --vocabulary {input.vocabulary} "
        "--ambiguities {input.ambiguities} --out {output} {input.cards} {input.rule_built} > {log} 2>&1"
