# Golden stage: one golden trajectory per task card, each replayed on a clean database (or the
# task's initial state) and compared with upstream's gold-state hash; then the replay table.
#
# A job fails when a call argument has no provenance or when the replay does not reproduce
# upstream's hash, so a domain's replay table only ever lists verified trajectories. One job per
# domain builds every task's trajectory, one file per task: the domain's model and database load
# once instead of once per task (start-up was ~1 s of each per-task job). Every golden
# trajectory feeds the domain's coordination reference, so nothing downstream could re-run per task.
for _domain in DESIGN.domains:

    rule:
        name:
            f"golden_{_domain}"
        input:
            cards=all_cards(_domain),
            db=str(FILES[_domain].db),
            vocabulary=str(FILES[_domain].vocabulary),
            ambiguities=str(FILES[_domain].ambiguities),
        output:
            all_golden(_domain),
        log:
            f"logs/golden/{_domain}.log",
        benchmark:
            f"benchmarks/golden/{_domain}.tsv"
        # On the chain every episode waits for (rules/cards.smk).
        priority: 20
        group:
            "task_stages"
        conda:
            "../envs/incognita.yaml"
        resources:
            **TASK_STAGE_RESOURCES["golden"],
        params:
            domain=_domain,
            generator=GOLDEN_GENERATOR_VERSION,
            pairs=lambda w, input, output: " ".join(f"--card {c} --out {o}" for c, o in zip(input.cards, output)),
        shell:
            "python -m incognita golden --domain {params.domain} {params.pairs} --db {input.db} "
            "--vocabulary {input.vocabulary} --ambiguities {input.ambiguities} > {log} 2>&1"

    rule:
        name:
            f"golden_replay_table_{_domain}"
        input:
            all_golden(_domain),
        output:
            str(paths.replay_table(_domain)),
        log:
            f"logs/golden/{_domain}_replay.log",
        benchmark:
            f"benchmarks/golden_replay_table/{_domain}.tsv"
        group:
            "task_stages"
        conda:
            "../envs/incognita.yaml"
        resources:
            **TASK_STAGE_RESOURCES["golden_replay_table"],
        shell:
            "python -m incognita replay-table --out {output} {input} > {log} 2>&1"
