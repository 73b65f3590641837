"""The peak matrix: per boot (vCPU count) and variant, rnull and null_blk
IOPS, rnull/null_blk, rnull_mod/null_blk and, for variants with a `ref`
file, the cost of rnull against rnull in the reference variant."""

from __future__ import annotations

from names import is_peak_matrix, variant_order
from rows import by_cpus, find_row, row_ratio

SCEN = "peak"


def peak_matrix(rows) -> list[dict]:
    """The matrix cells; [] unless scenario peak has matrix variants."""
    rows = [r for r in rows if r["scenario"] == SCEN and r["job"] == ""]
    if not is_peak_matrix({r["variant"] for r in rows}):
        return []
    cells = []
    for cpus, rs in by_cpus(rows).items():
        for var in variant_order(SCEN, {r["variant"] for r in rs}):
            cells.append(_cell(rs, cpus, var))
    return cells


def _cell(rs, cpus, var):
    def get(v, drv):
        return find_row(rs, SCEN, v, drv) if v else None

    rn, mod = get(var, "rnull"), get(var, "rnull_mod")
    ref = next((r["variant_ref"] for r in rs if r["variant"] == var and r["variant_ref"]), None)
    nb, nb_from = get(var, "null_blk"), var
    if nb is None and ref:
        nb, nb_from = get(ref, "null_blk"), ref
    rn_ref = get(ref, "rnull")
    cell = {"cpus": cpus, "variant": var, "ref": ref,
            "null_blk_variant": nb_from if nb else None,
            "rnull": rn, "null_blk": nb, "rnull_mod": mod, "rnull_ref": rn_ref,
            "rnull_vs_null_blk": None, "rnull_mod_vs_null_blk": None, "cost_vs_ref": None}
    if nb:
        if rn:
            cell["rnull_vs_null_blk"] = row_ratio(rn, nb)
        if mod:
            cell["rnull_mod_vs_null_blk"] = row_ratio(mod, nb)
    if rn and rn_ref:
        cell["cost_vs_ref"] = row_ratio(rn, rn_ref)
    return cell


def matrix_json(cells) -> list[dict]:
    """The cells for summary.json: row references replaced by their means."""
    def mean(r):
        return None if r is None else r["iops_mean"]

    return [{**c, **{k: mean(c[k]) for k in ("rnull", "null_blk", "rnull_mod", "rnull_ref")}}
            for c in cells]
