"""Model backends shared by every family: the entry, the interface and registry, the transport,
and one protocol module per provider (`openai`, `anthropic`).

Each environment family supplies its own offline `scripted` participants and resolves
`scripted:` specs itself; every other family is built here (docs/architecture.md, "A model
backend family").
"""
