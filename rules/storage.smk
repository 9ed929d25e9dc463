# Workflow files under a default storage provider (docs/scale-out.md, "Without a shared
# filesystem"). The files under WORKFLOW_FILE_DIRS (config/) are the workflow's sources, not
# data, but Snakemake looks for every input of a rule in the storage: this local rule copies each
# one a job reads from the checkout to the storage, so nobody has to copy config/ there, and an
# edited file, newer than its copy, is copied again and re-runs what reads it, as it would without
# a storage provider. Inputs marked local() would stay out of the storage instead, but when no
# filesystem is shared Snakemake runs every job with a local() input on the submitting machine
# (snakemake.jobs.Job.is_local; snakemake issue #3735): every episode job among them.
# Without a storage provider there is no such rule (a file would be its own input).
if workflow.storage_settings.default_storage_provider:

    rule workflow_file:
        input:
            local("{path}"),
        output:
            "{path}",
        wildcard_constraints:
            path="(" + "|".join(map(re.escape, WORKFLOW_FILE_DIRS)) + ")/.+",
        localrule: True
        shell:
            "cp {input} {output}"
