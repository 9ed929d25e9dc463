# Figures 2-7 (PNG and SVG) and Tables 1-2 (CSV and Markdown) from the statistics
# (incognita.access.figures.paper_figures; docs/figures.md). `snakemake --report report.html` bundles them, each
# with its caption from report/figures.rst. With several design domains: the pooled figures, each
# domain's under results/figures/<domain>/, and Figure 9 setting the domains side by side.


rule figures:
    input:
        expand(f"{paths.STATS_DIR}/{{name}}", name=get_stats_outputs()),
    output:
        report(
            directory(paths.FIGURES_DIR),
            patterns=["{name}.png", "{name}.md"],
            caption="../report/figures.rst",
            category="Figures and tables",
            labels={"name": "{name}"},
        ),
    log:
        "logs/figures.log",
    benchmark:
        "benchmarks/figures.tsv"
    conda:
        "../envs/incognita.yaml"
    params:
        stats_dir=lambda w, input: os.path.dirname(input[0]),
        domains=",".join(DESIGN.domains),
    shell:
        "python -m incognita figures --stats-dir {params.stats_dir} --out-dir {output} "
        "--domains {params.domains} > {log} 2>&1"
