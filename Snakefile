# Incognita pipeline: table of contents. Logic lives in the `incognita` package; every rule
# calls its CLI. Stages and outputs are described in README.md and docs/.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"


wildcard_constraints:
    domain="|".join(DESIGN.domains),
    task=LOCAL_ID.pattern,
    rep=r"\d+",
    model=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    arm="|".join(ARM_PATTERNS),
    cs_task="|".join(COLLABSIM_TASKS),
    cs_condition=r"[a-z0-9_]+",
    cs_model=r"[A-Za-z0-9][A-Za-z0-9._-]*",
    cs_design="|".join(COLLABSIM_DESIGNS),
    seed=r"\d+",


include: "rules/source.smk"
include: "rules/cards.smk"
include: "rules/golden.smk"
include: "rules/reference.smk"
include: "rules/episodes.smk"
include: "rules/native.smk"
include: "rules/reader.smk"
include: "rules/stats.smk"
include: "rules/figures.smk"
include: "rules/collabsim.smk"
include: "rules/viewer.smk"
include: "rules/storage.smk"


rule all:
    default_target: True
    input:
        get_final_targets(),
