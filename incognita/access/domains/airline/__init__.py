"""tau2's airline domain: an airline's customer service (users, reservations, flights; fourteen
tools: reservations booked, changed and cancelled, flights searched, certificates sent).

Its parts are the modules named in `DOMAIN.parts`; its data (vocabulary, upstream ambiguities,
the corpus rule, holder maps, role and rule texts) is config/domains/airline/. A customer states
their user id (there is no identity lookup), so no tool has the identity role.
"""

from incognita.access.domain import Domain

DOMAIN = Domain(
    name="airline",
    seed_namespace="airline",
    tool_roles={
        "calculate": "arithmetic",
        "transfer_to_human_agents": "handoff",
    },
    # A reservation is the record most writes act on; a booking and a certificate act on a user.
    subject_arguments=("reservation_id", "user_id"),
    parts={
        "upstream": "incognita.access.domains.airline.upstream",
        "cards": "incognita.access.domains.airline.cards",
        "golden": "incognita.access.domains.airline.golden",
        "reader": "incognita.access.domains.airline.reader",
        "scripted": "incognita.access.domains.airline.scripted.agent",
    },
)
