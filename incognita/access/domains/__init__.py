"""One package per benchmark domain (incognita.access.domain: what a domain provides, and the
registry that finds it). Each package's `DOMAIN` names its parts; nothing here imports them."""
