"Extra checks of iclr26nb.pepbench beyond the notebook asserts: brute force against exact computation, invariants, bad inputs."
import numpy as np, pytest, torch
from iclr26nb.pepbench import (AA20, CONVS, DENOMS, GNN, NegativeSampler, PeptideDataset, clean, cluster_identity, collate_graphs,
                               distribution_report, fasta_to_smiles, identity_edges, make_synthetic, mol_graph, outlier_mask, pairwise_identity)


def _indel_family(rng, n_fam=25, size=4):
    out = []
    for _ in range(n_fam):
        s = "".join(rng.choice(list(AA20), int(rng.integers(4, 35)))); out.append(s)
        for _ in range(size):
            m = list(s)
            for _ in range(int(rng.integers(1, 5))):
                p = int(rng.integers(len(m)))
                if rng.random() < 0.4: del m[p]
                elif rng.random() < 0.5: m.insert(p, AA20[rng.integers(20)])
                else: m[p] = AA20[rng.integers(20)]
            out.append("".join(m) or "A")
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("min_id", [0.5, 0.8, 0.95])
def test_lossless_filter_equals_exact(seed, min_id):
    seqs = _indel_family(np.random.default_rng(seed))
    for denom in DENOMS:
        ex = {tuple(e) for e in identity_edges(seqs, min_id, denom=denom, backend="exact")[0].tolist()}
        for k in (1, 2, 3):
            got = {tuple(e) for e in identity_edges(seqs, min_id, denom=denom, k=k)[0].tolist()}
            assert got == ex, (denom, k, len(ex - got))


def test_identity_matches_scalar_lcs():
    rng = np.random.default_rng(3); seqs = _indel_family(rng, 6, 3)
    def lcs(a, b):
        T = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1): T[i][j] = max(T[i - 1][j - 1] + (a[i - 1] == b[j - 1]), T[i - 1][j], T[i][j - 1])
        return T[-1][-1]
    for a in seqs[:8]:
        for b in seqs[:8]: assert abs(pairwise_identity(a, b) - lcs(a, b) / max(len(a), len(b))) < 1e-12


def test_cluster_split_is_leak_free_by_construction():
    ds, _ = make_synthetic("family", n=300, n_families=30, min_len=10, max_len=30, seed=4)
    cl = cluster_identity(ds.items); lab = np.zeros(len(ds), int)
    for c, m in enumerate(cl): lab[m] = c
    e, _ = identity_edges(ds.items, backend="exact")
    assert (lab[e[:, 0]] == lab[e[:, 1]]).all()


@pytest.mark.parametrize("method", ["bin", "nn", "mmd", "ot", "moment", "kde"])
def test_samplers_match_and_do_not_repeat(method):
    ds, truth = make_synthetic("confound", n=300, seed=5)
    pos = [s for s, y in zip(ds.items, ds.y) if y == 1]
    neg = NegativeSampler(truth["pool"], method=method).sample(pos, seed=1)
    assert len(neg) == len(pos) and len(set(neg)) == len(neg) and not set(neg) & set(pos)
    ks_random = distribution_report(pos, NegativeSampler(truth["pool"], method="random").sample(pos, seed=1)).ks.max()
    assert distribution_report(pos, neg).ks.max() < ks_random
    assert NegativeSampler(truth["pool"], method=method).sample(pos, seed=1) == neg          # seeded


def test_outliers_closed_form():
    y = np.r_[np.arange(20.0), 1000.0]
    assert outlier_mask(y).tolist() == [False] * 20 + [True]
    ds = PeptideDataset(["".join(np.random.default_rng(i).choice(list(AA20), 10)) for i in range(21)], y, task="regression")
    out, rep = clean(ds, outliers="zscore"); assert rep.outliers == 1 and rep.ok and out.y.max() == 19.0
    with pytest.raises(ValueError, match="regression task"): clean(PeptideDataset(["KLAK"], [1]), outliers="iqr")


@pytest.mark.parametrize("conv", CONVS)
def test_gnn_permutation_invariant(conv):
    g = mol_graph(fasta_to_smiles("KLAKW")); net = GNN(16, 2, conv, virtual_node=True).eval()
    perm = np.random.default_rng(0).permutation(g.n); inv = np.argsort(perm)
    from iclr26nb.pepbench import Graph
    gp = Graph(g.x[perm], inv[g.edge_index], g.edge_attr)
    with torch.no_grad(): assert torch.allclose(net(*collate_graphs([g])), net(*collate_graphs([gp])), atol=1e-5)


def test_monomer_assembly_matches_rdkit():
    from iclr26nb.pepbench import assemble_peptide, biln_to_smiles, fasta_to_biln, helm_to_smiles, nc_variant, to_biln, to_helm, default_monomers
    rng = np.random.default_rng(7); lib = default_monomers()
    for _ in range(150):
        p = "".join(rng.choice(list(AA20), int(rng.integers(1, 30))))
        assert assemble_peptide(list(p)) == fasta_to_smiles(p)
        q = "".join(a.lower() if rng.random() < 0.5 and a != "G" else a for a in p)
        assert biln_to_smiles(fasta_to_biln(q, d_lowercase=True)) == fasta_to_smiles(q, d_lowercase=True)
        if len(p) > 1:
            ht = [(len(p) - 1, 2, 0, 1)]
            assert helm_to_smiles(to_helm(list(p), ht), lib) == biln_to_smiles(to_biln(list(p), ht)) == nc_variant(p, "cyclic")


def test_translator_recovers_rates():
    from iclr26nb.pepbench import NCTranslator, to_biln, biln_to_smiles
    rng = np.random.default_rng(8); can = ["".join(rng.choice(list(AA20), 12)) for _ in range(800)]
    tr = [to_biln(["d" + a if a != "G" and rng.random() < 0.2 else a for a in s]) for s in can]
    t = NCTranslator(alpha=0).fit(can, tr)
    for a in "AKL": assert abs(t.probs(a)["d" + a] - 0.2) < 0.06
    assert t.p_cyclic == 0 and all(biln_to_smiles(b) for b in t.translate(can[:20], seed=1))


def _families(seed, n=120):
    ds, _ = make_synthetic("family", n=n, n_families=n // 10, min_len=10, max_len=40, seed=seed)
    return ds.items


def test_cluster_agreement_brute_force():
    from itertools import combinations
    from iclr26nb.pepbench import cluster_agreement
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(2, 30)); la, lb = rng.integers(0, 4, n), rng.integers(0, 5, n)
        part = lambda l: [list(np.flatnonzero(l == c)) for c in np.unique(l)]
        pa = {p for p in combinations(range(n), 2) if la[p[0]] == la[p[1]]}; pb = {p for p in combinations(range(n), 2) if lb[p[0]] == lb[p[1]]}
        ag = cluster_agreement(part(la), part(lb), n)
        assert abs(ag["jaccard"] - (len(pa & pb) / len(pa | pb) if pa | pb else 1.0)) < 1e-12
        assert abs(ag["precision"] - (len(pa & pb) / len(pa) if pa else 1.0)) < 1e-12
        assert abs(ag["recall"] - (len(pa & pb) / len(pb) if pb else 1.0)) < 1e-12


@pytest.mark.parametrize("backend,exe", [("cdhit", "cd-hit"), ("mmseqs", "mmseqs")])
def test_binary_backend_partitions_and_agrees(backend, exe):
    import shutil
    if shutil.which(exe) is None: pytest.skip(f"`{exe}` is not installed (apt-get install {'cd-hit' if exe == 'cd-hit' else 'mmseqs2'})")
    from iclr26nb.pepbench import backend_agreement, cluster_labels
    seqs = _families(1)
    cl = cluster_identity(seqs, backend=backend); cluster_labels(cl, len(seqs))          # a partition of every input
    assert cluster_identity(seqs, backend=backend) == cl                                  # deterministic
    r = backend_agreement(seqs, [backend]).iloc[0]
    assert r.status == "ok" and r.ari > 0.5, r.to_dict()


def test_backend_missing_is_reported(monkeypatch):
    import shutil
    from iclr26nb.pepbench import backend_agreement
    monkeypatch.setattr(shutil, "which", lambda exe: None)
    r = backend_agreement(["KLAKLAK", "KLAKLAA"], ["cdhit"]).iloc[0]
    assert r.status == "`cd-hit` not installed"
    with pytest.raises(FileNotFoundError, match="cd-hit"): backend_agreement(["KLAKLAK"], ["cdhit"], skip_missing=False)


def test_multichain_helm_matches_rdkit():
    from rdkit import Chem
    from iclr26nb.pepbench import PolymerGraph, biln_to_smiles, default_monomers, helm_to_smiles, parse_biln_graph, parse_helm_graph, to_biln_graph, to_helm_graph
    rng = np.random.default_rng(11); lib = default_monomers()
    for _ in range(40):
        chains = {f"PEPTIDE{c + 1}": list("".join(rng.choice(list(AA20), int(rng.integers(1, 10)))) + "C") for c in range(int(rng.integers(2, 4)))}
        ps = list(chains); bonds = [(ps[k], len(chains[ps[k]]) - 1, 3, ps[k + 1], len(chains[ps[k + 1]]) - 1, 3) for k in range(0, len(ps) - 1, 2)]
        g = PolymerGraph(chains, bonds); h = to_helm_graph(g)
        assert parse_helm_graph(h) == g and parse_biln_graph(to_biln_graph(g)).key() == g.key()
        ref = Chem.MolToSmiles(Chem.MolFromHELM(h))
        assert helm_to_smiles(h, lib) == ref == biln_to_smiles(to_biln_graph(g))
    with pytest.raises(ValueError, match="supported types"): PolymerGraph({"RNA1": ["A"]})
