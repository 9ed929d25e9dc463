# Native anchor: the design's tasks in the unmodified upstream harness (incognita.access.native.native_run).
# One job per model, not per cell: importing the harness (tau2.registry pulls in litellm)
# costs several seconds, more than a model's whole offline run. The job writes one result
# file per (task, repetition) in the harness's own format, plus, for repaired tasks, an
# archived run of the unrepaired task (never pooled). Inputs and params are what a model's
# native runs depend on, so editing one model's spec or profile re-runs only its job.


rule native:
    input:
        cards=design_cards(),
        unrepaired=design_cards(rule_built=True, tasks=get_native_archived_tasks()),
        golden=design_golden(),
        tasks=per_domain(lambda d: FILES[d].tasks),
        locks_verified=per_domain(paths.locks_verified),
    output:
        get_native_outputs(),
    log:
        "logs/native/{model}.log",
    benchmark:
        "benchmarks/native/{model}.tsv"
    # The longest jobs of the build: started first, they run beside the episode jobs instead
    # of forming the tail on their own.
    priority: 10
    retries: 1
    conda:
        "../envs/incognita.yaml"
    threads: get_api_threads
    resources:
        api_calls=get_api_calls,
    params:
        spec=get_model_entry,
        profile=get_model_profile,
        customer=get_participant_entry("customer"),
        models_order=",".join(get_design_models()),
        arms=",".join(DESIGN.rotation),
        tasks=",".join(get_design_tasks()),
        reps=DESIGN.repetitions,
        seed=DESIGN.seed,
        max_steps=config["native"]["max_steps"],
        max_errors=config["native"]["max_errors"],
        archive="--archive-unrepaired" if config["native"]["archive_unrepaired"] else "--no-archive-unrepaired",
        scripted_agents=config["scripted_agents"],
        generator=NATIVE_GENERATOR_VERSION,
        # The roots the inputs and outputs sit under (incognita.access.paths), read off them.
        source_root=lambda w, input: paths.domain_root(input.tasks[0]),
        cards_root=lambda w, input: paths.domain_root(input.cards[0]),
        golden_root=lambda w, input: paths.domain_root(input.golden[0]),
        out_dir=lambda w, output: paths.native_root(output[0]),
        pacing=get_pacing,  # not compared: a changed rate limit re-runs nothing
    shell:
        "python -m incognita native --model {wildcards.model} --spec {params.spec:q} --customer {params.customer:q} "
        "--models-order {params.models_order} --arms {params.arms} --tasks {params.tasks} --reps {params.reps} "
        "--seed {params.seed} --max-steps {params.max_steps} --max-errors {params.max_errors} {params.archive} "
        "--source-root {params.source_root} --cards-root {params.cards_root} --golden-root {params.golden_root} "
        "--scripted-agents {params.scripted_agents} --pacing {params.pacing:q} --out-dir {params.out_dir} > {log} 2>&1"
