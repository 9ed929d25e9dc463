# Episodes: one job per (model, task). It runs each repetition's block through the design's
# arms in Latin-square order (the paper's schedule) and writes one record per cell; a job
# per model and task rather than per cell keeps process start-up (~1 s of imports) from
# dominating the offline design. Inputs and params are exactly what a
# block's results depend on (card, golden trajectory, prompts, the model's spec and profile,
# seed, budget, generator version), so changing one model's spec re-runs only its blocks
# and an unchanged rerun does nothing. Package code is not an input (see README).


rule episodes:
    input:
        card="results/cards/{task}.json",
        golden="results/golden/{task}.json",
        db=f"{SOURCE_DIR}/db.json",
        partition=config["golden"]["partition"],
        arm_registry=ARM_REGISTRY,
        locks_verified="results/reference/locks_verified.txt",
        prompts=get_prompt_files(),
        vocabulary=config["vocabulary"],  # the policy terms scripted agents know
    output:
        get_block_outputs(),
    log:
        "logs/episodes/{model}/{task}.log",
    benchmark:
        "benchmarks/episodes/{model}/{task}.tsv"
    retries: 1
    conda:
        "../envs/incognita.yaml"
    threads: get_api_threads
    resources:
        api_calls=get_api_calls,
    params:
        spec=get_model_entry,
        profile=get_model_profile,
        models_order=",".join(get_design_models()),
        task_position=lambda w: DESIGN.tasks.index(w.task),
        arms=",".join(DESIGN.rotation),
        seed=DESIGN.seed,
        reps=DESIGN.repetitions,
        budget=DESIGN.budget,
        customer=get_participant_entry("customer"),
        service=get_participant_entry("service"),
        judge=get_participant_entry("judge"),
        information_channel=get_information_channel(),
        prompts_dir=lambda w, input: os.path.commonpath(input.prompts),
        scripted_agents=config["scripted_agents"],
        generator=EPISODE_GENERATOR_VERSION,
        pacing=get_pacing,  # not compared: a changed rate limit re-runs nothing
    shell:
        "python -m incognita episodes --model {wildcards.model} --spec {params.spec:q} "
        "--models-order {params.models_order} --task {wildcards.task} --task-position {params.task_position} "
        "--reps {params.reps} --arms {params.arms} --seed {params.seed} --budget {params.budget} "
        "--customer {params.customer:q} --service {params.service:q} --judge {params.judge:q} "
        "--information-channel {params.information_channel} --card {input.card} --golden {input.golden} "
        "--db {input.db} --partition {input.partition} --arm-registry {input.arm_registry} --prompts {params.prompts_dir} "
        "--scripted-agents {params.scripted_agents} --vocabulary {input.vocabulary} --pacing {params.pacing:q} "
        "--out-dir results/episodes > {log} 2>&1"


rule episodes_done:
    input:
        get_all_episodes(),
    output:
        "results/episodes/manifest.tsv",
    log:
        "logs/episodes/manifest.log",
    benchmark:
        "benchmarks/episodes_done.tsv"
    conda:
        "../envs/incognita.yaml"
    shell:
        "python -m incognita episode-table --out {output} {input} > {log} 2>&1"
