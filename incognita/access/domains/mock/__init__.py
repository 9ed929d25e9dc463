"""tau2's mock domain: a small task tracker (users and their tasks; four tools), upstream's own test
domain. Four of its nine tasks start from an initial state (initialization data, initialization
actions, a message history), as telecom's do, which is why it proves the seam (tests/access/
domains/mock/). Its data is config/domains/mock/.

Its parts are its own card rules and identifier shapes, and the generic golden rules and plain
scripted agent: its values come from the customer's words, the policy vocabulary and the results
of its message history, so it needs no knowledge of how to open or choose its records.
"""

from incognita.access.domain import Domain

DOMAIN = Domain(
    name="mock",
    seed_namespace="mock",
    tool_roles={"transfer_to_human_agents": "handoff"},
    subject_arguments=("task_id", "user_id"),
    parts={
        "upstream": "incognita.access.domains.mock.upstream",
        "cards": "incognita.access.domains.mock.cards",
        "golden": "incognita.access.golden.plain_rules",
        "reader": "incognita.access.domains.mock.reader",
    },
)
