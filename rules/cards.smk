# Cards: one job per domain builds the cards of every task of that domain (a few milliseconds
# each) in one process, because a process per task spent almost all its time starting up. The
# outputs stay one file per task. Editing one repair overlay re-runs its domain's job; the other
# cards are rewritten with the same bytes. Nothing downstream is finer-grained than that anyway:
# every card feeds the domain's coordination reference, whose lock check gates every episode and
# native job of the domain.
#
# The task stages (source to the lock check) are one rule per design domain, made in a loop: a
# domain's outputs are its tasks' files, and the list differs by domain. Each is named
# <stage>_<domain> and sits in the `task_stages` job group (cluster executors only).
for _domain in DESIGN.domains:

    rule:
        name:
            f"cards_{_domain}"
        input:
            tasks=str(FILES[_domain].tasks),
            db=str(FILES[_domain].db),
            manifest=str(FILES[_domain].source / "MANIFEST.json"),
            policy=str(FILES[_domain].source / "policy.md"),  # read only to check the copy against its manifest
            repairs=get_all_repairs(_domain),
        output:
            cards=all_cards(_domain),
            rule_built=all_cards(_domain, rule_built=True),
        log:
            f"logs/cards/{_domain}.log",
        benchmark:
            f"benchmarks/cards/{_domain}.tsv"
        # The chain every episode waits for (cards, golden, reference, lock check): ahead of
        # every other ready job, so the episodes start as early as they can.
        priority: 20
        group:
            "task_stages"
        conda:
            "../envs/incognita.yaml"
        resources:
            **TASK_STAGE_RESOURCES["cards"],
        params:
            domain=_domain,
            source_dir=lambda w, input: os.path.dirname(input.db),
            # A function, as before the seam: a folder given as a string is a path prefix of
            # the inputs, which the linter refuses; `d` binds this loop's domain.
            repairs_dir=lambda w, d=_domain: str(FILES[d].repairs),
            out_dir=lambda w, output: os.path.dirname(output.cards[0]),
            version=config["source"]["version"],
            builder=CARD_BUILDER_VERSION,
            tasks=" ".join(get_all_tasks(_domain)),
        shell:
            "python -m incognita cards --domain {params.domain} --source-dir {params.source_dir} "
            "--version {params.version} --repairs-dir {params.repairs_dir} --out-dir {params.out_dir} "
            "{params.tasks} > {log} 2>&1"

    rule:
        name:
            f"audit_{_domain}"
        input:
            cards=all_cards(_domain),
            rule_built=all_cards(_domain, rule_built=True, tasks=get_repaired_tasks(_domain)),
            db=str(FILES[_domain].db),
            vocabulary=str(FILES[_domain].vocabulary),
            ambiguities=str(FILES[_domain].ambiguities),
        output:
            str(paths.audit_table(_domain)),
        log:
            f"logs/audit/{_domain}.log",
        benchmark:
            f"benchmarks/audit/{_domain}.tsv"
        group:
            "task_stages"
        conda:
            "../envs/incognita.yaml"
        resources:
            **TASK_STAGE_RESOURCES["audit"],
        params:
            domain=_domain,
            source_dir=lambda w, input: os.path.dirname(input.db),
        shell:
            "python -m incognita audit --domain {params.domain} --source-dir {params.source_dir} "
            "--vocabulary {input.vocabulary} --ambiguities {input.ambiguities} --out {output} "
            "{input.cards} {input.rule_built} > {log} 2>&1"
