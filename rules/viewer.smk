# The trajectory viewer (incognita.viewer; docs/viewer.md): a static site under results/viewer/
# with every trial of the trials table (our arms and native) and, when the design has them,
# every CollabSim run. It reads the records themselves; they reach it through the tables built
# from all of them (the trials table lists every episode and native record, runs.parquet every
# CollabSim run), which a changed record rebuilds. Those two inputs stand for some 1,300 files
# that the workflow's parse would otherwise check once more. The arm registry and the partition
# give each arm's lanes (Vega, or the six desks).
VIEWER_VERSION = read_constant("incognita.viewer", "VIEWER_VERSION")


rule viewer:
    input:
        trials="results/trials.parquet",
        reference="results/reference/coordination.json",
        partition=config["golden"]["partition"],
        arm_registry=ARM_REGISTRY,
        collabsim=([COLLABSIM_PATHS.RUNS_TABLE] if "collabsim" in config else []),
    output:
        directory("results/viewer"),
    log:
        "logs/viewer.log",
    benchmark:
        "benchmarks/viewer.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        version=VIEWER_VERSION,
        collabsim=(f"--collabsim {COLLABSIM_RESULTS}" if "collabsim" in config else "--no-collabsim"),
    shell:
        "python -m incognita view --out {output} --trials {input.trials} --reference {input.reference} "
        "--partition {input.partition} --arm-registry {input.arm_registry} --episodes results/episodes --native results/native "
        "{params.collabsim} > {log} 2>&1"
