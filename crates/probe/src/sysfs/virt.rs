//! A VM's disk: paravirtual (virtio, Xen, Hyper-V, VMware's PVSCSI) or emulated by the
//! hypervisor (QEMU's, VirtualBox's, VMware's SCSI and ATA disks). Its `queue/rotational` is
//! what the hypervisor chose to say (virtio_blk says 1 unless told otherwise, whatever is
//! behind it), not the medium: iogauge takes the medium of such a disk as unknown rather
//! than warn about seeks that may not exist.
//!
//! Read from sysfs, as `udevadm info -a` walks it: the disk's `device` link and every
//! device above it up to `devices/` — a bus (`subsystem`) that exists only in VMs, a
//! driver (`driver`) that serves only virtual hardware — then the SCSI/ATA `vendor` and
//! `model` hypervisors give their emulated disks.

use super::{read_attr, SysfsError};
use std::path::Path;

/// Buses only a hypervisor provides: (the `subsystem` link's name, what to say).
const BUSES: [(&str, &str); 3] = [
    ("virtio", "on the virtio bus"),
    // xen-blkfront registers as `vbd` on the `xen` bus (xenbus_register_driver_common).
    ("xen", "on the Xen bus (xen-blkfront)"),
    ("vmbus", "on Hyper-V's VMBus (storvsc)"),
];

/// Drivers that serve only virtual hardware: the `driver` link's name.
const DRIVERS: [&str; 7] = [
    "virtio_blk",
    "virtio_scsi",
    "virtio-pci",
    "virtio-mmio",
    "vbd",
    "hv_storvsc",
    "vmw_pvscsi",
];

/// SCSI/ATA identities of hypervisors' emulated disks: (vendor prefix or "", model prefix),
/// each trimmed and compared without case. A disk behind a passed-through controller keeps
/// its own identity and is not matched.
const IDENTITIES: [(&str, &str); 7] = [
    ("", "QEMU HARDDISK"),
    ("QEMU", ""),
    ("", "VBOX HARDDISK"),
    ("VMware", ""),
    ("", "VMware Virtual"),
    ("Msft", "Virtual Disk"),
    ("Google", "PersistentDisk"),
];

/// Why the disk whose sysfs directory is `dir` (under `root`) is a VM's, in words, the
/// strongest sign first (`driver virtio_blk, driver virtio-pci, on the virtio bus`); `None`
/// for a disk that shows no sign of it.
pub(crate) fn virtual_disk(root: &Path, dir: &Path) -> Result<Option<String>, SysfsError> {
    let Ok(device) = std::fs::canonicalize(dir.join("device")) else {
        return Ok(None);
    };
    let top = std::fs::canonicalize(root.join("devices")).unwrap_or_else(|_| root.join("devices"));
    // Drivers first (the disk's own, then its controllers'), then buses: the first says most.
    let (mut why, mut buses): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for d in device
        .ancestors()
        .take_while(|d| d.starts_with(&top) && *d != top)
    {
        if let Some(driver) = link_name(&d.join("driver")) {
            if DRIVERS.contains(&driver.as_str()) {
                push(&mut why, format!("driver {driver}"));
            }
        }
        if let Some(bus) = link_name(&d.join("subsystem")) {
            if let Some((_, say)) = BUSES.iter().find(|(b, _)| *b == bus) {
                push(&mut buses, (*say).to_string());
            }
        }
    }
    why.extend(buses);
    let vendor = read_attr(&device.join("vendor"))?.unwrap_or_default();
    let model = read_attr(&device.join("model"))?.unwrap_or_default();
    if is_virtual_identity(&vendor, &model) {
        push(&mut why, format!("{} {}", vendor, model).trim().to_string());
    }
    Ok((!why.is_empty()).then(|| why.join(", ")))
}

/// Whether a SCSI/ATA `vendor` and `model` are a hypervisor's emulated disk's.
pub(crate) fn is_virtual_identity(vendor: &str, model: &str) -> bool {
    let starts = |text: &str, prefix: &str| {
        text.trim()
            .to_ascii_lowercase()
            .starts_with(&prefix.to_ascii_lowercase())
    };
    // A vendor of hex digits is virtio's PCI vendor id (`0x1af4`), not a SCSI vendor.
    let vendor = if vendor.starts_with("0x") { "" } else { vendor };
    IDENTITIES
        .iter()
        .any(|(v, m)| (v.is_empty() || starts(vendor, v)) && (m.is_empty() || starts(model, m)))
}

fn push(why: &mut Vec<String>, s: String) {
    if !why.contains(&s) {
        why.push(s);
    }
}

/// The last component of the link `path` points to (`../../bus/virtio` → `virtio`).
fn link_name(path: &Path) -> Option<String> {
    let target = std::fs::read_link(path).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_of_emulated_disks() {
        for (vendor, model) in [
            ("ATA     ", "QEMU HARDDISK   "),
            ("QEMU    ", "QEMU HARDDISK   "),
            ("ATA", "VBOX HARDDISK"),
            ("VMware  ", "Virtual disk    "),
            ("VMware,", "VMware Virtual S"),
            ("Msft    ", "Virtual Disk    "),
            ("Google  ", "PersistentDisk  "),
        ] {
            assert!(is_virtual_identity(vendor, model), "{vendor:?} {model:?}");
        }
        for (vendor, model) in [
            ("ATA     ", "WDC WD40EFRX-68N"),
            ("ATA", "Samsung SSD 870"),
            ("SEAGATE ", "ST4000NM0023    "),
            ("0x1af4", ""),
            ("", ""),
            ("Msft", "Some Other Disk"),
        ] {
            assert!(!is_virtual_identity(vendor, model), "{vendor:?} {model:?}");
        }
    }
}
