# Reference stage, per domain: the coordination reference and the checks on frozen artifacts.
#
# The coordination reference is rebuilt from the domain's golden trajectories, cards (for
# withholds_disclosure), holder maps and the arm registry, then checked against its lock in the
# domain's locks.yaml: a change upstream that alters the reference makes this rule fail instead of
# feeding a different reference downstream.
#
# Corpus selection writes config/domains/<domain>/corpus.yaml, a committed artifact, so it is not
# a rule: a human runs `incognita corpus --domain <domain>`, reviews the diff, runs `incognita freeze
# --domain <domain> --bump` and commits. The workflow only verifies the locks (verify_locks_<domain>).
# Selection reads the do-nothing table (idle_<domain>) to exclude tasks an agent passes by doing nothing.
for _domain in DESIGN.domains:

    rule:
        name:
            f"reference_{_domain}"
        input:
            golden=all_golden(_domain),
            cards=all_cards(_domain),
            partition=str(FILES[_domain].partition),
            arm_registry=ARM_REGISTRY,
            locks=str(FILES[_domain].locks),
        output:
            str(paths.coordination_file(_domain)),
        log:
            f"logs/reference/{_domain}.log",
        benchmark:
            f"benchmarks/reference/{_domain}.tsv"
        # On the chain every episode waits for (rules/cards.smk).
        priority: 20
        group:
            "task_stages"
        conda:
            "../envs/incognita.yaml"
        resources:
            **TASK_STAGE_RESOURCES["reference"],
        params:
            domain=_domain,
            golden_dir=lambda w, input: os.path.dirname(input.golden[0]),
            cards_dir=lambda w, input: os.path.dirname(input.cards[0]),
            # Only read to print totals over the frozen corpus; not an input of the reference.
            corpus=str(FILES[_domain].corpus),
        shell:
            "python -m incognita reference --domain {params.domain} --golden-dir {params.golden_dir} "
            "--cards-dir {params.cards_dir} --partition {input.partition} --arm-registry {input.arm_registry} "
            "--out {output} --locks {input.locks} --corpus {params.corpus} > {log} 2>&1"

    # The do-nothing check (incognita/access/selection/idle.py): the idle profile on every task in
    # every arm, natively too. Corpus selection reads the table and excludes every task it passes.
    # It is not part of the default target: the frozen corpus already records those exclusions.
    rule:
        name:
            f"idle_{_domain}"
        input:
            golden=all_golden(_domain),
            cards=all_cards(_domain),
            db=str(FILES[_domain].db),
            tasks=str(FILES[_domain].tasks),
            partition=str(FILES[_domain].partition),
            vocabulary=str(FILES[_domain].vocabulary),
            agents=config["scripted_agents"],
        output:
            str(paths.idle_table(_domain)),
        log:
            f"logs/idle/{_domain}.log",
        benchmark:
            f"benchmarks/idle/{_domain}.tsv"
        conda:
            "../envs/incognita.yaml"
        resources:
            **TASK_STAGE_RESOURCES["idle"],
        params:
            domain=_domain,
            golden_dir=lambda w, input: os.path.dirname(input.golden[0]),
            cards_dir=lambda w, input: os.path.dirname(input.cards[0]),
            generator=EPISODE_GENERATOR_VERSION,
            prompts=config["prompts"],
            domain_prompts=str(FILES[_domain].prompts),
        shell:
            "python -m incognita idle --domain {params.domain} --out {output} --cards-dir {params.cards_dir} "
            "--golden-dir {params.golden_dir} --db {input.db} --tasks-json {input.tasks} "
            "--partition {input.partition} --vocabulary {input.vocabulary} --prompts {params.prompts} "
            "--domain-prompts {params.domain_prompts} --scripted-agents {input.agents} > {log} 2>&1"

    # The oracle check (incognita/access/selection/oracle.py): the oracle profile (told the holders,
    # never slipping) on every upstream task of the domain in the direct arm, with the first wrong
    # argument of each failure. It measures the scripted choosing rules on every task, not only the
    # corpus (docs/episodes.md).
    rule:
        name:
            f"oracle_{_domain}"
        input:
            golden=all_golden(_domain),
            cards=all_cards(_domain),
            db=str(FILES[_domain].db),
            partition=str(FILES[_domain].partition),
            vocabulary=str(FILES[_domain].vocabulary),
            corpus=str(FILES[_domain].corpus),
        output:
            str(paths.oracle_table(_domain)),
        log:
            f"logs/oracle/{_domain}.log",
        benchmark:
            f"benchmarks/oracle/{_domain}.tsv"
        conda:
            "../envs/incognita.yaml"
        resources:
            **TASK_STAGE_RESOURCES["oracle"],
        params:
            domain=_domain,
            golden_dir=lambda w, input: os.path.dirname(input.golden[0]),
            cards_dir=lambda w, input: os.path.dirname(input.cards[0]),
            generator=EPISODE_GENERATOR_VERSION,
            prompts=config["prompts"],
            domain_prompts=str(FILES[_domain].prompts),
            # The oracle's own profile, not the whole file: editing another profile re-runs nothing here.
            agents=config["scripted_agents"],
            profile=lambda w: json.dumps(_scripted_profiles().get("oracle"), sort_keys=True),
        shell:
            "python -m incognita oracle --domain {params.domain} --out {output} --cards-dir {params.cards_dir} "
            "--golden-dir {params.golden_dir} --db {input.db} --partition {input.partition} "
            "--prompts {params.prompts} --domain-prompts {params.domain_prompts} "
            "--scripted-agents {params.agents} --vocabulary {input.vocabulary} --corpus {input.corpus} > {log} 2>&1"

    rule:
        name:
            f"verify_locks_{_domain}"
        input:
            reference=str(paths.coordination_file(_domain)),
            corpus=str(FILES[_domain].corpus),
            interpretation=str(FILES[_domain].interpretation),
            locks=str(FILES[_domain].locks),
        output:
            str(paths.locks_verified(_domain)),
        log:
            f"logs/verify_locks/{_domain}.log",
        benchmark:
            f"benchmarks/verify_locks/{_domain}.tsv"
        # On the chain every episode waits for (rules/cards.smk).
        priority: 20
        group:
            "task_stages"
        conda:
            "../envs/incognita.yaml"
        resources:
            **TASK_STAGE_RESOURCES["verify_locks"],
        # Each artifact is checked where the job sees it (under a storage provider, not at the path
        # its lock records); the lines printed name the recorded paths, so the output's bytes do not
        # depend on where the job ran.
        shell:
            "python -m incognita verify-locks --locks {input.locks} --artifact coordination={input.reference} "
            "--artifact corpus={input.corpus} --artifact interpretation={input.interpretation} > {log} 2>&1 "
            "&& cp {log} {output}"
