"""Model backends shared by every family: the interface, the registry and the `openai` family.

Each environment family supplies its own offline `scripted` participants and resolves
`scripted:` specs itself; every other family is built here.
"""
