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
