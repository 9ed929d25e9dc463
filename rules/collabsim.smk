# CollabSim, the second environment family (incognita.collabsim; docs/collabsim.md).
# One job per cell (task, condition, model label, design) runs every seed of the design; its
# inputs are exactly the files its runs depend on (the condition file, its baseline, the
# prompts, the probe template, the scripted profiles, the persona library), so editing one
# condition file re-runs only that condition's runs.


rule collabsim_run:
    input:
        unpack(get_collabsim_inputs),
    output:
        get_collabsim_run_outputs(),
    log:
        "logs/collabsim/{cs_task}/{cs_condition}/{cs_model}/{cs_design}.log",
    benchmark:
        "benchmarks/collabsim_run/{cs_task}/{cs_condition}/{cs_model}/{cs_design}.tsv"
    # All runs early, like the analysis chain after them (`collabsim_table`): otherwise the last
    # runs wait behind the episodes and the chain's 35 s form the build's tail.
    priority: 5
    retries: 1
    conda:
        "../envs/incognita.yaml"
    threads: get_collabsim_threads
    resources:
        api_calls=get_collabsim_api_calls,
    params:
        seeds=get_collabsim_seeds(),
        models=get_collabsim_models,
        # The root the outputs sit under, read off them (under a storage provider the job writes
        # them below .snakemake/storage/, not at results/). A Path, and derived from the outputs:
        # Snakemake compares neither with the last run's params (the outputs already carry the
        # root), so neither moving it to the paths module nor deriving it re-ran a run.
        out_root=lambda w, output: COLLABSIM_PATHS.results_root(output[0]),
        generator=COLLABSIM_GENERATOR_VERSION,
        pacing=get_pacing,  # not compared: a changed rate limit re-runs nothing
    shell:
        "python -m incognita collabsim run {input.experiment} --seeds {params.seeds} --models {params.models:q} "
        "--model-label {wildcards.cs_model} --design {wildcards.cs_design} --pacing {params.pacing:q} "
        "--out-root {params.out_root} > {log} 2>&1"


rule collabsim_table:
    input:
        get_all_collabsim_runs(),
    output:
        runs=COLLABSIM_PATHS.RUNS_TABLE,
        probes=COLLABSIM_PATHS.PROBES_TABLE,
        convergence=COLLABSIM_PATHS.CONVERGENCE_TABLE,
    log:
        "logs/collabsim/table.log",
    benchmark:
        "benchmarks/collabsim_table.tsv"
    # CollabSim's analysis is a chain of single jobs (table, statistics, figures; some 50 s of
    # CPU): ahead of the episodes, so that it runs beside them instead of after them.
    priority: 5
    conda:
        "../envs/incognita.yaml"
    params:
        run_dirs=lambda w, input: sorted({os.path.dirname(p) for p in input}),
    shell:
        "python -m incognita collabsim table {params.run_dirs} --out {output.runs} --probes-out {output.probes} "
        "--convergence-out {output.convergence} > {log} 2>&1"


rule collabsim_stats:
    input:
        runs=COLLABSIM_PATHS.RUNS_TABLE,
        probes=COLLABSIM_PATHS.PROBES_TABLE,
        convergence=COLLABSIM_PATHS.CONVERGENCE_TABLE,
    output:
        expand(f"{COLLABSIM_PATHS.STATS_DIR}/{{name}}.{{ext}}", name=COLLABSIM_STATS, ext=["csv", "md"]),
    log:
        "logs/collabsim/stats.log",
    benchmark:
        "benchmarks/collabsim_stats.tsv"
    # On CollabSim's analysis chain (`collabsim_table`).
    priority: 5
    conda:
        "../envs/incognita.yaml"
    params:
        out_dir=lambda w, output: os.path.dirname(output[0]),
    shell:
        "python -m incognita collabsim stats --runs {input.runs} --probes {input.probes} "
        "--convergence {input.convergence} --out-dir {params.out_dir} > {log} 2>&1"


rule collabsim_figures:
    input:
        stats=expand(f"{COLLABSIM_PATHS.STATS_DIR}/{{name}}.csv", name=COLLABSIM_STATS),
        runs=COLLABSIM_PATHS.RUNS_TABLE,
    output:
        report(
            directory(COLLABSIM_PATHS.FIGURES_DIR),
            patterns=["{name}.png"],
            caption="../report/collabsim.rst",
            category="CollabSim",
            labels={"figure": "{name}"},
        ),
    log:
        "logs/collabsim/figures.log",
    benchmark:
        "benchmarks/collabsim_figures.tsv"
    # On CollabSim's analysis chain (`collabsim_table`).
    priority: 5
    conda:
        "../envs/incognita.yaml"
    params:
        stats_dir=lambda w, input: os.path.dirname(input.stats[0]),
    shell:
        "python -m incognita collabsim figures --stats-dir {params.stats_dir} --runs {input.runs} "
        "--out-dir {output} > {log} 2>&1"


rule collabsim_paper:
    input:
        runs=COLLABSIM_PATHS.RUNS_TABLE,
        probes=COLLABSIM_PATHS.PROBES_TABLE,
        convergence=COLLABSIM_PATHS.CONVERGENCE_TABLE,
    output:
        report(
            directory(COLLABSIM_PATHS.PAPER_DIR),
            patterns=["{name}.png"],
            caption="../report/collabsim_paper.rst",
            category="CollabSim (the paper's layout)",
            labels={"figure": "{name}"},
        ),
    log:
        "logs/collabsim/paper.log",
    benchmark:
        "benchmarks/collabsim_paper.tsv"
    priority: 5
    conda:
        "../envs/incognita.yaml"
    shell:
        "python -m incognita collabsim paper --runs {input.runs} --probes {input.probes} "
        "--convergence {input.convergence} --out-dir {output} > {log} 2>&1"
