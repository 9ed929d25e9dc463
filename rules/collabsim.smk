# CollabSim, the second environment family (incognita.collabsim; docs/collabsim.md).
# One job per (task, condition) runs every seed of the design; its inputs are exactly the
# files its runs depend on (the condition file, its baseline, the prompts, the scripted
# profiles), so editing one condition file re-runs only that condition's runs.


rule collabsim_run:
    input:
        unpack(get_collabsim_inputs),
    output:
        get_collabsim_run_outputs(),
    params:
        seeds=get_collabsim_seeds(),
        models=get_collabsim_models(),
        out_root=COLLABSIM_RESULTS,
        generator=COLLABSIM_GENERATOR_VERSION,
    resources:
        api_calls=get_collabsim_api_calls,
    retries: 1
    conda:
        "../envs/incognita.yaml"
    log:
        "logs/collabsim/{cs_task}/{cs_condition}.log",
    benchmark:
        "benchmarks/collabsim/{cs_task}/{cs_condition}.tsv"
    shell:
        "python -m incognita collabsim run {input.experiment} --seeds {params.seeds} --models {params.models:q} "
        "--out-root {params.out_root} > {log} 2>&1"


rule collabsim_table:
    input:
        get_all_collabsim_runs(),
    output:
        f"{COLLABSIM_RESULTS}/runs.parquet",
    params:
        run_dirs=lambda w, input: sorted({os.path.dirname(p) for p in input}),
    conda:
        "../envs/incognita.yaml"
    log:
        "logs/collabsim/table.log",
    shell:
        "python -m incognita collabsim table {params.run_dirs} --out {output} > {log} 2>&1"


rule collabsim_stats:
    input:
        f"{COLLABSIM_RESULTS}/runs.parquet",
    output:
        expand(f"{COLLABSIM_RESULTS}/stats/{{name}}.{{ext}}", name=["summary", "effects"], ext=["csv", "md"]),
    params:
        out_dir=lambda w, output: os.path.dirname(output[0]),
    conda:
        "../envs/incognita.yaml"
    log:
        "logs/collabsim/stats.log",
    shell:
        "python -m incognita collabsim stats --runs {input} --out-dir {params.out_dir} > {log} 2>&1"


rule collabsim_figures:
    input:
        stats=expand(f"{COLLABSIM_RESULTS}/stats/{{name}}.csv", name=["summary", "effects"]),
        runs=f"{COLLABSIM_RESULTS}/runs.parquet",
    output:
        report(
            directory(f"{COLLABSIM_RESULTS}/figures"),
            patterns=["{name}.png"],
            caption="../report/collabsim.rst",
            category="CollabSim",
            labels={"task": "{name}"},
        ),
    params:
        stats_dir=lambda w, input: os.path.dirname(input.stats[0]),
    conda:
        "../envs/incognita.yaml"
    log:
        "logs/collabsim/figures.log",
    shell:
        "python -m incognita collabsim figures --stats-dir {params.stats_dir} --runs {input.runs} "
        "--out-dir {output} > {log} 2>&1"
