# Episodes: one job per (model, task). It runs each repetition's block through the design's
# arms in Latin-square order (the paper's schedule) and writes one record per cell; a job
# per model and task rather than per cell keeps process start-up (~1 s of imports) from
# dominating the offline design. Inputs and params are exactly what a block's results depend on
# (card, golden trajectory, the domain's database, holder maps, vocabulary and prompts, the
# model's spec and profile, seed, budget, generator version), so changing one model's spec
# re-runs only its blocks and an unchanged rerun does nothing. Package code is not an input
# (see README). A task is {domain}/{task}: its domain and upstream id.


rule episodes:
    input:
        card=str(paths.card_file("{domain}", "{task}")),
        golden=str(paths.golden_file("{domain}", "{task}")),
        db=lambda w: str(FILES[w.domain].db),
        partition=lambda w: str(FILES[w.domain].partition),
        arm_registry=ARM_REGISTRY,
        locks_verified=str(paths.locks_verified("{domain}")),
        prompts=get_prompt_files,
        vocabulary=lambda w: str(FILES[w.domain].vocabulary),  # the policy terms scripted agents know
    output:
        get_block_outputs(),
    log:
        "logs/episodes/{model}/{domain}/{task}.log",
    benchmark:
        "benchmarks/episodes/{model}/{domain}/{task}.tsv"
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
        task_position=lambda w: DESIGN.tasks.index(qualify(w.domain, w.task)),
        arms=",".join(DESIGN.rotation),
        seed=DESIGN.seed,
        reps=DESIGN.repetitions,
        budget=DESIGN.budget,
        customer=get_participant_entry("customer"),
        service=get_participant_entry("service"),
        judge=get_participant_entry("judge"),
        information_channel=get_information_channel(),
        prompts_dir=config["prompts"],
        domain_prompts=lambda w: FILES[w.domain].prompts,
        scripted_agents=config["scripted_agents"],
        generator=EPISODE_GENERATOR_VERSION,
        out_dir=lambda w, output: paths.episodes_root(output[0]),
        pacing=get_pacing,  # not compared: a changed rate limit re-runs nothing
    shell:
        "python -m incognita episodes --model {wildcards.model} --spec {params.spec:q} "
        "--models-order {params.models_order} --task {wildcards.domain}/{wildcards.task} "
        "--task-position {params.task_position} "
        "--reps {params.reps} --arms {params.arms} --seed {params.seed} --budget {params.budget} "
        "--customer {params.customer:q} --service {params.service:q} --judge {params.judge:q} "
        "--information-channel {params.information_channel} --card {input.card} --golden {input.golden} "
        "--db {input.db} --partition {input.partition} --arm-registry {input.arm_registry} --prompts {params.prompts_dir} "
        "--domain-prompts {params.domain_prompts} --scripted-agents {params.scripted_agents} "
        "--vocabulary {input.vocabulary} --pacing {params.pacing:q} --out-dir {params.out_dir} > {log} 2>&1"


rule episodes_done:
    input:
        get_all_episodes(),
    output:
        paths.EPISODE_MANIFEST,
    log:
        "logs/episodes/manifest.log",
    benchmark:
        "benchmarks/episodes_done.tsv"
    conda:
        "../envs/incognita.yaml"
    shell:
        "python -m incognita episode-table --out {output} {input} > {log} 2>&1"
