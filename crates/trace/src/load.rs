//! What the loaders of `tp_btf` programs share ([`crate::Tracer`], [`crate::capture`]): the
//! running kernel's BTF, and a program loaded against it and attached to its tracepoint, each
//! failure an [`Unavailable`] that says which.

use crate::error::{one_line, Unavailable};
use aya::programs::BtfTracePoint;
use aya::{Btf, Ebpf};

/// The running kernel's BTF (`/sys/kernel/btf/vmlinux`), which the CO-RE relocations and the
/// `tp_btf` programs are resolved against.
pub(crate) fn kernel_btf() -> Result<Btf, Unavailable> {
    Btf::from_sys_fs().map_err(|e| Unavailable::NoBtf(one_line(&e)))
}

/// Loads program `name` for tracepoint `tp` and attaches it.
pub(crate) fn attach(
    ebpf: &mut Ebpf,
    btf: &Btf,
    name: &str,
    tp: &'static str,
) -> Result<(), Unavailable> {
    let prog: &mut BtfTracePoint = ebpf
        .program_mut(name)
        .ok_or_else(|| Unavailable::Load(format!("no program {name} in the object")))?
        .try_into()
        .map_err(|e| Unavailable::Load(one_line(&e)))?;
    prog.load(tp, btf)
        .map_err(|e| Unavailable::Load(format!("{name}: {}", one_line(&e))))?;
    prog.attach()
        .map_err(|e| Unavailable::Attach(tp, one_line(&e)))?;
    Ok(())
}
