# Source: each design domain's files copied out of the pinned package, with checksums
# (incognita.access.cards.source). One rule per domain, like every stage up to the lock check
# (rules/cards.smk says why).
for _domain in DESIGN.domains:

    rule:
        name:
            f"source_{_domain}"
        output:
            db=str(FILES[_domain].db),
            tasks=str(FILES[_domain].tasks),
            policy=str(FILES[_domain].source / "policy.md"),
            manifest=str(FILES[_domain].source / "MANIFEST.json"),
        log:
            f"logs/source/{_domain}.log",
        benchmark:
            f"benchmarks/source/{_domain}.tsv"
        priority: 20  # on the chain every episode waits for (rules/cards.smk)
        group:
            "task_stages"  # cluster executors only (docs/scale-out.md); local runs ignore groups
        conda:
            "../envs/incognita.yaml"
        resources:
            **TASK_STAGE_RESOURCES["source"],
        params:
            domain=_domain,
            out_dir=lambda w, output: os.path.dirname(output.manifest),
            version=config["source"]["version"],
        shell:
            "python -m incognita source --domain {params.domain} --out {params.out_dir} --version {params.version} > {log} 2>&1"
