# Statistics: the paper's estimator, pre-specified analysis, separability, interactions,
# split-half concordance and corpus-size extrapolation, from the trials table
# (incognita.access.stats; docs/statistics.md). The interpretation table is verified against its lock.


rule stats:
    input:
        trials="results/trials.parquet",
        interpretation=config["interpretation"],
        locks="config/locks.yaml",
    output:
        expand("results/stats/{name}", name=get_stats_outputs()),
    log:
        "logs/stats.log",
    benchmark:
        "benchmarks/stats.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        out_dir=lambda w, output: os.path.dirname(output[0]),
        seed=DESIGN.seed,
        models=",".join(DESIGN.models),
        arms=",".join(DESIGN.rotation),
        exploratory=EXPLORATORY.to_json(),
    shell:
        "python -m incognita stats --trials {input.trials} --interpretation {input.interpretation} "
        "--locks {input.locks} --out {params.out_dir} --seed {params.seed} "
        "--models {params.models} --arms {params.arms} --exploratory {params.exploratory:q} > {log} 2>&1"
