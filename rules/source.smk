rule source:
    output:
        db=f"{SOURCE_DIR}/db.json",
        tasks=f"{SOURCE_DIR}/tasks.json",
        policy=f"{SOURCE_DIR}/policy.md",
        manifest=f"{SOURCE_DIR}/MANIFEST.json",
    log:
        "logs/source.log",
    benchmark:
        "benchmarks/source.tsv"
    priority: 20  # on the chain every episode waits for (rules/cards.smk, `cards`)
    conda:
        "../envs/incognita.yaml"
    params:
        out_dir=lambda w, output: os.path.dirname(output.manifest),
        version=config["source"]["version"],
    shell:
        "python -m incognita source --out {params.out_dir} --version {params.version} > {log} 2>&1"
