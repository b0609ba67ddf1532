"Unit tests of iclr26nb.cryonet_refine beyond the method page: CHARMM names, map-model CCs, Rama-Z, the transformer, meta-training."
import numpy as np, pytest, torch
gemmi = pytest.importorskip("gemmi")
from iclr26nb.core.runtime import seeded
from iclr26nb.cryonet_refine import (RAMA, ROTA, CryoNetRefiner, OneStepDenoiser, Restraints, build_helix_turn_helix, build_peptide,
                                     cc_mask, featurize, load_structure, map_model_cc, meta_train, perturb, random_rotation, simulate_map)

def _write(tmp_path, residues, name="m.pdb"):
    "residues: list of (chain, res_name, seq, [(atom, element, xyz)]) written with gemmi."
    st = gemmi.Structure(); mdl = gemmi.Model(1); chains = {}
    for ch, rn, num, atoms in residues:
        c = chains.setdefault(ch, gemmi.Chain(ch)); r = gemmi.Residue(); r.name = rn; r.seqid = gemmi.SeqId(num, " ")
        for an, el, xyz in atoms:
            a = gemmi.Atom(); a.name, a.element, a.pos = an, gemmi.Element(el), gemmi.Position(*xyz); r.add_atom(a)
        c.add_residue(r)
    for c in chains.values(): mdl.add_chain(c)
    st.add_model(mdl); st.setup_entities(); p = tmp_path / name; st.write_pdb(str(p)); return p

def test_charmm_names_dna_rna_and_ions(tmp_path):
    p = _write(tmp_path, [("A", "HSD", 1, [("N", "N", (0, 0, 0)), ("CA", "C", (1.46, 0, 0))]),
                          ("A", "ILE", 2, [("N", "N", (3, 0, 0)), ("CD", "C", (4, 1, 0))]),
                          ("B", "ADE", 1, [("P", "P", (10, 0, 0)), ("O1P", "O", (11.5, 0, 0)), ("O2'", "O", (10, 2, 0))]),
                          ("C", "THY", 1, [("P", "P", (20, 0, 0)), ("O2P", "O", (21.5, 0, 0))]),
                          ("D", "SOD", 1, [("SOD", "Na", (30, 0, 0))])])
    s = load_structure(p)
    assert s.res_name == ["HIS", "HIS", "ILE", "ILE", "A", "A", "A", "DT", "DT"]
    assert s.atom_name[3] == "CD1" and s.atom_name[5] == "OP1" and s.atom_name[8] == "OP2"
    assert s.moltype[4] == "rna" and s.moltype[7] == "dna"
    raw = load_structure(p, charmm_names=False, remove_ions=False)
    assert "SOD" in raw.res_name and "HSD" in raw.res_name

def test_map_model_cc_invariances():
    s = build_helix_turn_helix(16); m = simulate_map(s, 4.0, snr=2.0, seed=3)
    a = map_model_cc(s, m); b = map_model_cc(s, m.like(m.data * 2.5 + 1.0))     # Pearson CCs are affine invariant
    assert all(abs(a[k] - b[k]) < 1e-6 for k in a)
    assert all(-1 <= v <= 1 for v in a.values()) and abs(a["cc_mask"] - cc_mask(s, m)) < 1e-12

def test_rama_z_sign_and_rotamer_levels():
    deg = lambda v, n: torch.deg2rad(torch.full((n,), v, dtype=torch.float64))
    assert float(RAMA.rama_z(deg(0.0, 30), deg(180.0, 30), torch.zeros(30, dtype=torch.bool))) < -2   # strained
    assert ROTA.t_out < ROTA.t_fav < 1

def test_transformer_equivariance_and_meta_train_determinism():
    s = build_helix_turn_helix(16); x = torch.as_tensor(s.coords, dtype=torch.float32); f = featurize(s)
    with seeded(0): net = OneStepDenoiser(hidden=16, layers=2, backbone="transformer")
    for p in net.parameters(): torch.nn.init.normal_(p, std=0.1)
    g = net.graph(x, s.bonds); Q = torch.as_tensor(random_rotation(np.random.default_rng(4)), dtype=torch.float32)
    assert torch.allclose(net(x @ Q.T - 2.0, 0.5, f, g), net(x, 0.5, f, g) @ Q.T - 2.0, atol=1e-3)
    R = Restraints.from_structure(s); case = (perturb(s, "predicted", 2.0, seed=1, restraints=R), simulate_map(s, 3.5, snr=2.0, seed=1), R)
    logs = []
    for _ in range(2):
        with seeded(0): n2 = OneStepDenoiser(hidden=16, layers=2)
        logs.append(meta_train(CryoNetRefiner(n2, lr=1e-2, max_iter=5), [case]))
    assert logs[0] == logs[1]

# --- cropped refinement (crop_windows, Restraints.subset, CryoNetRefiner(max_tokens=)), real AdK files, kabsch/morph ---
from iclr26nb.cryonet_refine import (RefineLoss, build_bdna_coarse, build_bundle, crop_windows, kabsch, load_adk, morph,
                                     shipped_file)

def _tokens(s): return list(zip(s.chain, s.res_idx.tolist()))

@pytest.mark.parametrize("mt,ov", [(4, 1), (7, 3), (10, 0), (50, 10)])
def test_crop_windows_core_exactly_once_and_nearest_centre(mt, ov):
    for s in (build_bundle(3, 9), build_bdna_coarse("GCGATCGAT"), build_helix_turn_helix(23)):
        keys = _tokens(s); W = crop_windows(s, mt, ov); core_n = np.zeros(s.n, int)
        pos = {}                                                     # token -> [(|position - centre|, window)] over its windows
        for w, (ix, core) in enumerate(W):
            assert (np.diff(ix) > 0).all() and core.shape == ix.shape
            toks = list(dict.fromkeys(keys[a] for a in ix)); assert len(toks) <= mt and len({t[0] for t in toks}) == 1
            assert set(ix) == {a for a in range(s.n) if keys[a] in set(toks)}          # whole residues only
            core_n[ix[core]] += 1
            for p, t in enumerate(toks): pos.setdefault(t, []).append((abs(p - (len(toks) - 1) / 2), w))
        assert (core_n == 1).all()                                   # every atom is core in exactly one window
        for w, (ix, core) in enumerate(W):                           # ... the window where its residue is nearest the centre
            for a in ix[core]: assert min(d for d, _ in pos[keys[a]]) == next(d for d, v in pos[keys[a]] if v == w)
        n_chain = {c: len({k for k in keys if k[0] == c}) for c in set(s.chain)}
        assert len(W) == sum(1 if n <= mt else -(-(n - mt) // (mt - ov)) + 1 for n in n_chain.values())
    with pytest.raises(ValueError, match="overlap"): crop_windows(build_helix_turn_helix(10), 5, 5)

def test_restraints_subset_matches_brute_force():
    s = build_bundle(2, 10); R = Restraints.from_structure(s); rng = np.random.default_rng(0)
    for idx in (np.arange(s.n), np.sort(rng.choice(s.n, s.n // 2, replace=False)), crop_windows(s, 6, 2)[1][0]):
        sub = R.subset(idx); new = {int(a): k for k, a in enumerate(idx)}
        for terms, vals in (("bonds", ["bond_d0"]), ("angles", ["angle_t0"]), ("omega", []), ("chiral", ["chiral_v0"]),
                            ("rama", ["rama_gly"]), ("cb", []), ("pp", ["pp_d0"]), ("rot", [])):
            T = getattr(R, terms).numpy(); keep = [r for r in range(len(T)) if all(int(a) in new for a in T[r])]
            want = np.array([[new[int(a)] for a in T[r]] for r in keep]).reshape(-1, T.shape[1] if T.ndim == 2 else 0)
            np.testing.assert_array_equal(getattr(sub, terms).numpy().reshape(want.shape), want)
            for v in vals: np.testing.assert_array_equal(getattr(sub, v).numpy(), getattr(R, v).numpy()[keep])
        np.testing.assert_array_equal(sub.radii.numpy(), R.radii.numpy()[idx]); assert sub.n == len(idx)
        x = torch.as_tensor(s.coords)[torch.as_tensor(idx)]; b = R.bonds.numpy(); d0 = R.bond_d0.numpy()
        inside = [r for r in range(len(b)) if b[r, 0] in new and b[r, 1] in new]     # bond RMSD on the kept bonds by hand
        d = np.array([np.linalg.norm(s.coords[b[r, 0]] - s.coords[b[r, 1]]) - d0[r] for r in inside])
        assert abs(float(sub.energy(x)["bond_rmsd"]) - np.sqrt((d ** 2).mean())) < 1e-6
    for bad in ([3, 1], [], [0, 0], [-1, 2], [0, s.n]):
        with pytest.raises(ValueError, match="sorted unique"): R.subset(bad)

def _hth_case():
    s = build_helix_turn_helix(18); R = Restraints.from_structure(s)
    return s, R, perturb(s, "predicted", 2.0, seed=2, restraints=R), simulate_map(s, 3.5, voxel=1.2, snr=2.0, seed=2)

def test_cropped_refinement_one_window_equals_uncropped_and_first_loss_by_hand():
    s, R, start, m = _hth_case()
    with seeded(0): net = OneStepDenoiser(hidden=16, layers=2)
    whole = CryoNetRefiner(net, lr=1e-2, max_iter=8).refine(start, m, R)
    one = CryoNetRefiner(net, lr=1e-2, max_iter=8, max_tokens=18).refine(start, m, R)
    np.testing.assert_array_equal(one.coords, whole.coords); assert [h["loss"] for h in one.history] == [h["loss"] for h in whole.history]
    ref = CryoNetRefiner(net, lr=1e-2, max_iter=3, max_tokens=8, crop_overlap=2); res = ref.refine(start, m, R)
    W = crop_windows(start, 8, 2); assert res.extra["n_crops"] == len(W) == 3
    losses = []                                                      # iteration 0 by hand: the mean of the crops' losses
    for ix, _ in W:
        sk = start.select(np.isin(np.arange(start.n), ix)); rk = R.subset(ix); x0 = torch.as_tensor(sk.coords, dtype=torch.float32)
        with torch.no_grad(): losses.append(float(RefineLoss(sk, m, rk)(ref.denoise(net, x0, featurize(sk), net.graph(x0, rk.bonds.numpy())))[0]))
    assert abs(res.history[0]["loss"] - np.mean(losses)) < 1e-4 * max(1.0, abs(np.mean(losses)))
    assert res.coords.shape == start.coords.shape and np.isfinite(res.coords).all()
    with pytest.raises(ValueError, match="max_tokens"): CryoNetRefiner(net, max_tokens=0)

def test_kabsch_closed_form_and_morph():
    rng = np.random.default_rng(1); P = rng.normal(size=(30, 3)) * 5; Q0 = random_rotation(rng)
    R, t, r = kabsch(P, P @ Q0.T + [1.0, -2.0, 3.0]); np.testing.assert_allclose(R, Q0, atol=1e-9); assert r < 1e-9
    assert abs(np.linalg.det(kabsch(P, P * [1, 1, -1])[0]) - 1) < 1e-9          # a proper rotation, even against a mirror image
    Q = P @ Q0.T + rng.normal(size=P.shape) * 0.3; R, t, r = kabsch(P, Q)
    for _ in range(100):                                             # no perturbed rotation fits better
        E = np.linalg.qr(np.eye(3) + 0.05 * rng.normal(size=(3, 3)))[0]; E *= np.sign(np.linalg.det(E))
        x = P @ (E @ R).T; x += Q.mean(0) - x.mean(0); assert np.sqrt(((x - Q) ** 2).sum(1).mean()) >= r - 1e-12
    s = build_helix_turn_helix(12); e = s.with_coords(s.coords @ Q0.T + rng.normal(size=s.coords.shape))
    sup = morph(s, e, 0.0).coords; half = morph(s, e, 0.5).coords
    np.testing.assert_allclose(half, (sup + e.coords) / 2, atol=1e-12); np.testing.assert_allclose(morph(s, e, 1.0).coords, e.coords, atol=1e-12)
    with pytest.raises(ValueError, match="frac"): morph(s, e, 1.5)
    with pytest.raises(ValueError): kabsch(P[:2], Q[:2])

def test_pdb_without_element_column(tmp_path):
    "CHARMM-style names in columns 13-16 and no element column: 'CA  ' must read as carbon, H atoms must go."
    lines = [f"ATOM  {k + 1:5d} {nm:<4s} ALA A   1    {x:8.3f}{0.0:8.3f}{0.0:8.3f}  1.00  0.00      PROT"
             for k, (nm, x) in enumerate([("N", 0.0), ("HN", -1.0), ("CA", 1.46), ("HA", 1.5), ("C", 2.5), ("O", 3.2), ("CB", 1.0)])]
    p = tmp_path / "noel.pdb"; p.write_text("\n".join(lines + ["END"]) + "\n")
    s = load_structure(p)
    assert s.atom_name == ["N", "CA", "C", "O", "CB"] and s.element == ["N", "C", "C", "O", "C"]
    assert load_structure(p, remove_h=False).n == 7

def test_load_adk_real_files():
    pytest.importorskip("MDAnalysisTests")
    o, c = load_adk("heavy"); assert (o.n, len(set(o.res_idx.tolist()))) == (1656, 214) and sorted(set(o.element)) == ["C", "N", "O", "S"]
    assert o.atom_name == c.atom_name and o.res_name == c.res_name
    bo, bc = load_adk(); ca = np.array([a == "CA" for a in bo.atom_name]); assert ca.sum() == 214
    assert kabsch(bo.coords, bc.coords, ca)[2] > 3.0                 # open and closed differ by a domain motion
    with pytest.raises(FileNotFoundError): shipped_file("no_such_file.pdb")
    with pytest.raises(ValueError, match="atoms"): load_adk("ca")
