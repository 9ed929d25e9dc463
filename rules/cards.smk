# Cards: one job builds the cards of every task (a few milliseconds each) in one process,
# because a process per task spent almost all its time starting up. The outputs stay one
# file per task. Editing one repair overlay re-runs this job; the other cards are rewritten
# with the same bytes. Nothing downstream is finer-grained than that anyway: every card
# feeds the coordination reference, whose lock check gates every episode and native job.


rule cards:
    input:
        tasks=rules.source.output.tasks,
        db=rules.source.output.db,
        manifest=rules.source.output.manifest,
        repairs=get_all_repairs(),
    output:
        cards=expand("results/cards/{task}.json", task=get_all_tasks()),
        rule_built=expand("results/cards/v1/{task}.json", task=get_all_tasks()),
    log:
        "logs/cards.log",
    benchmark:
        "benchmarks/cards.tsv"
    # The chain every episode waits for (cards, golden, reference, lock check): ahead of
    # every other ready job, so the episodes start as early as they can.
    priority: 20
    conda:
        "../envs/incognita.yaml"
    params:
        source_dir=lambda w, input: os.path.dirname(input.db),
        repairs_dir=lambda w: REPAIRS_DIR,
        out_dir=lambda w, output: os.path.dirname(output.cards[0]),
        version=config["source"]["version"],
        builder=CARD_BUILDER_VERSION,
        tasks=" ".join(get_all_tasks()),
    shell:
        "python -m incognita cards --source-dir {params.source_dir} --version {params.version} "
        "--repairs-dir {params.repairs_dir} --out-dir {params.out_dir} {params.tasks} > {log} 2>&1"


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
    benchmark:
        "benchmarks/audit.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        source_dir=lambda w, input: os.path.dirname(input.db),
    shell:
        "python -m incognita audit --source-dir {params.source_dir} --vocabulary {input.vocabulary} "
        "--ambiguities {input.ambiguities} --out {output} {input.cards} {input.rule_built} > {log} 2>&1"
