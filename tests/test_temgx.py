"Series 15 (temgx): the real-model path (PyTorch Geometric cell, METR-LA-style loader, out-of-window probe) and page hygiene."
import json, pickle, re
from pathlib import Path
import numpy as np, pytest, torch

from iclr26nb.temgx import (GConvGRULite, SnapshotCellModel, TorchTemporalAdapter, TemGX, TemporalGraph, WindowedModel,
                            load_traffic, make_planted_cascades, probe_window)

ROOT = Path(__file__).resolve().parents[1]


def _graph(seed=0):
    g, y, _ = make_planted_cascades(N=30, T=10, delta=4, n_chains=3, seed=seed)
    return g, y


def test_pyg_cell_matches_lite_through_adapter():
    pytest.importorskip("torch_geometric")
    from iclr26nb.temgx import PyGGConvGRUCell
    g, _ = _graph(); w = g.window(8, 4)
    lite = GConvGRULite(4, hidden=16, seed=3)
    pyg = SnapshotCellModel(PyGGConvGRUCell.from_lite(lite), lite.head)
    masks = (torch.rand(5, w.num_edges, generator=torch.Generator().manual_seed(0)) > 0.3).float()
    a, b = TorchTemporalAdapter(pyg), TorchTemporalAdapter(lite)
    assert (a.predict_batch(w, masks) - b.predict_batch(w, masks)).abs().max() <= 1e-5
    assert (a.embeddings(w) - b.embeddings(w)).abs().max() <= 1e-5
    # the explainer sees the same model either way
    ea, eb = TemGX(a, k=3, delta=4).explain(g, 0, 8), TemGX(b, k=3, delta=4).explain(g, 0, 8)
    assert ea.cand == eb.cand and ea.Vs == eb.Vs


def test_pyg_cell_uses_torch_geometric():
    pytest.importorskip("torch_geometric")
    from torch_geometric.nn import MessagePassing
    from iclr26nb.temgx import PyGGConvGRUCell
    assert isinstance(PyGGConvGRUCell(4, 8).conv, MessagePassing)


def test_load_traffic_metr_la_files(tmp_path):
    rng = np.random.default_rng(0); T, N = 6, 5
    vals = rng.random((T, N, 2)).astype(np.float32)            # PyG-Temporal METR-LA: node_values.npy (T, N, 2)
    adj = rng.random((N, N)) * (rng.random((N, N)) > 0.5); np.fill_diagonal(adj, 1.0)
    np.save(tmp_path / "node_values.npy", vals); np.save(tmp_path / "adj_mat.npy", adj)
    with open(tmp_path / "adj_mx.pkl", "wb") as f:              # DCRNN: (sensor_ids, sensor_id_to_ind, adj_mx)
        pickle.dump(([f"s{i}" for i in range(N)], {f"s{i}": i for i in range(N)}, adj), f, protocol=2)
    np.savez(tmp_path / "speeds.npz", speed=vals[..., 0])
    g1 = load_traffic(tmp_path / "node_values.npy", tmp_path / "adj_mat.npy")
    g2 = load_traffic(tmp_path / "node_values.npy", tmp_path / "adj_mx.pkl")
    g3 = load_traffic(tmp_path / "speeds.npz", adj)
    assert isinstance(g1, TemporalGraph) and (g1.T, g1.num_nodes) == (T, N)
    assert torch.equal(g1.edges, g2.edges) and torch.equal(g1.edge_weight, g2.edge_weight)
    assert g3.x.shape == (T, N, 1)
    sym = np.maximum(adj, adj.T); np.fill_diagonal(sym, 0)
    for tau in range(T): assert torch.allclose(g1.adjacency(tau, normalize=False), torch.from_numpy(sym).float())
    with pytest.raises(ValueError, match="adjacency must be"): load_traffic(vals, adj[:4, :4])
    with pytest.raises(ValueError, match="unsupported file type"): load_traffic(tmp_path / "x.csv", adj)


def test_probe_window_raises_on_history():
    g, _ = _graph(1); lite = GConvGRULite(4, hidden=8, seed=0)
    with pytest.raises(ValueError, match="outside the window"): probe_window(lite, g, 9, 4)
    assert probe_window(WindowedModel(lite, 4), g, 9, 4) == 0.0


def test_no_control_characters_in_pages():
    bad = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
    for nb in sorted((ROOT / "nbs" / "15_temgx").glob("*.ipynb")):
        for c in json.loads(nb.read_text())["cells"]:
            assert not bad.search("".join(c["source"])), f"control character in a cell of {nb.name}"
