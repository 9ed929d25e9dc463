# The trajectory viewer (incognita.viewer; docs/viewer.md): a static site under results/viewer/
# with every trial of the trials table (our arms and native) and, when the design has them,
# every CollabSim run. It reads the records themselves; they reach it through the tables built
# from all of them (the trials table lists every episode and native record, runs.parquet every
# CollabSim run), which a changed record rebuilds. Those two inputs stand for some 1,300 files
# that the workflow's parse would otherwise check once more. The arm registry and each domain's
# holder maps give each arm's lanes (the one declared holder, or the desks).
VIEWER_VERSION = read_constant("incognita.viewer", "VIEWER_VERSION")


rule viewer:
    input:
        trials=paths.TRIALS_TABLE,
        references=per_domain(paths.coordination_file),
        partitions=per_domain(lambda d: FILES[d].partition),
        arm_registry=ARM_REGISTRY,
        collabsim=([COLLABSIM_PATHS.RUNS_TABLE] if "collabsim" in config else []),
    output:
        directory(paths.VIEWER_DIR),
    log:
        "logs/viewer.log",
    benchmark:
        "benchmarks/viewer.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        version=VIEWER_VERSION,
        domains=",".join(DESIGN.domains),
        reference_root=lambda w, input: paths.domain_root(input.references[0]),
        config_root=lambda w, input: paths.domain_root(input.partitions[0]),
        collabsim=(f"--collabsim {COLLABSIM_RESULTS}" if "collabsim" in config else "--no-collabsim"),
    shell:
        "python -m incognita view --out {output} --trials {input.trials} --domains {params.domains} "
        "--reference-root {params.reference_root} --domains-config {params.config_root} "
        "--arm-registry {input.arm_registry} --episodes results/episodes --native results/native "
        "{params.collabsim} > {log} 2>&1"
