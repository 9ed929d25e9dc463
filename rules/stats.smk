# Statistics: the paper's estimator, pre-specified analysis, separability, interactions,
# split-half concordance and corpus-size extrapolation, from the trials table
# (incognita.access.stats; docs/statistics.md). Each domain's interpretation table is verified
# against its lock; pooling several domains needs one analysis, so their tables must agree.
# With several design domains the stage writes the pooled tables (the domain a stratum) and each
# domain's own under results/stats/<domain>/.


rule stats:
    input:
        trials=paths.TRIALS_TABLE,
        interpretation=per_domain(lambda d: FILES[d].interpretation),
        locks=per_domain(lambda d: FILES[d].locks),
    output:
        expand(f"{paths.STATS_DIR}/{{name}}", name=get_stats_outputs()),
    log:
        "logs/stats.log",
    benchmark:
        "benchmarks/stats.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        out_dir=lambda w, output: os.path.dirname(output[0]),
        pairs=lambda w, input: " ".join(
            f"--interpretation {t} --locks {k}" for t, k in zip(input.interpretation, input.locks)
        ),
        seed=DESIGN.seed,
        models=",".join(DESIGN.models),
        arms=",".join(DESIGN.rotation),
        domains=",".join(DESIGN.domains),
        exploratory=EXPLORATORY.to_json(),
    shell:
        "python -m incognita stats --trials {input.trials} {params.pairs} "
        "--out {params.out_dir} --seed {params.seed} "
        "--models {params.models} --arms {params.arms} --domains {params.domains} --exploratory {params.exploratory:q} > {log} 2>&1"
