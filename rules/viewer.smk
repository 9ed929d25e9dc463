# The trajectory viewer (incognita.viewer; docs/viewer.md): a static site under results/viewer/
# with every trial of the trials table (our arms and native) and, when the design has them,
# every CollabSim run. It reads the records themselves, so they are its inputs (the lists the
# trials and CollabSim tables take): under a storage provider a job sees only its inputs, and
# sees them below .snakemake/storage/, so the roots it is given are read off them
# (docs/scale-out.md). The arm registry and each domain's holder maps give each arm's lanes (the
# one declared holder, or the desks).
VIEWER_VERSION = read_constant("incognita.viewer", "VIEWER_VERSION")


rule viewer:
    input:
        trials=paths.TRIALS_TABLE,
        episodes=get_all_episodes(),
        native=get_all_native(),
        references=per_domain(paths.coordination_file),
        partitions=per_domain(lambda d: FILES[d].partition),
        arm_registry=ARM_REGISTRY,
        collabsim=([COLLABSIM_PATHS.RUNS_TABLE] if "collabsim" in config else []),
        collabsim_runs=(get_all_collabsim_runs() if "collabsim" in config else []),
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
        # A design without episodes or without native runs has no record to read the root off:
        # the usual root then (the viewer reads only the records the trials table lists).
        episodes=lambda w, input: paths.episodes_root(input.episodes[0]) if input.episodes else paths.EPISODES_DIR,
        native=lambda w, input: paths.native_root(input.native[0]) if input.native else paths.NATIVE_DIR,
        collabsim=lambda w, input: (
            f"--collabsim {COLLABSIM_PATHS.results_root(input.collabsim_runs[0])}"
            if input.collabsim_runs
            else "--no-collabsim"
        ),
    shell:
        "python -m incognita view --out {output} --trials {input.trials} --domains {params.domains} "
        "--reference-root {params.reference_root} --domains-config {params.config_root} "
        "--arm-registry {input.arm_registry} --episodes {params.episodes} --native {params.native} "
        "{params.collabsim} > {log} 2>&1"
