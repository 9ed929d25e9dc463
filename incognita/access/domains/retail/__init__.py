"""tau2's retail domain: a web shop's customer service (users, orders, products; fifteen tools).

Its parts are the modules named in `DOMAIN.parts`; its data (holder maps, role and rule texts,
vocabulary, repairs, corpus, locks) is config/domains/retail/.
"""

from incognita.access.domain import Domain

DOMAIN = Domain(
    name="retail",
    seed_namespace="",  # retail's cells were seeded by the upstream id alone before the seam (Domain)
    tool_roles={
        "find_user_id_by_email": "identity",
        "find_user_id_by_name_zip": "identity",
        "calculate": "arithmetic",
        "transfer_to_human_agents": "handoff",
    },
    subject_arguments=("order_id", "user_id"),
    parts={
        "upstream": "incognita.access.domains.retail.upstream",
        "cards": "incognita.access.domains.retail.cards",
        "golden": "incognita.access.domains.retail.golden",
        "reader": "incognita.access.domains.retail.reader",
        "scripted": "incognita.access.domains.retail.scripted.agent",
    },
)
