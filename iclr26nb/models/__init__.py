"Model families shared by several iclr26nb series (tiny transformer LMs, flow/diffusion networks)."
