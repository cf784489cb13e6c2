//! Tests of sysfs.rs on fake sysfs trees laid out like the kernel's: device directories under
//! `devices/`, reached through relative symlinks from `class/block/` and `dev/block/`.

use super::*;
use iogauge_model::preflight::leaves;
use std::os::unix::fs::symlink;

const SDA: &str = "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda";
const SDB: &str = "devices/pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0/block/sdb";
const SDC: &str = "devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block/sdc";
const NVME_CTRL: &str = "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0";
const VIRT: &str = "devices/virtual/block";

/// A fake sysfs in a temporary directory.
struct FakeSys {
    tmp: tempfile::TempDir,
}

impl FakeSys {
    fn new() -> Self {
        FakeSys {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    fn sysfs(&self) -> Sysfs {
        Sysfs::new(self.tmp.path())
    }

    /// Writes `<root>/<rel>`, creating directories.
    fn attr(&self, rel: &str, text: &str) {
        let p = self.tmp.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A relative symlink at `<root>/<from>` to `<root>/<to>`, as sysfs has them.
    fn link(&self, from: &str, to: &str) {
        let p = self.tmp.path().join(from);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let ups = Path::new(from).components().count() - 1;
        symlink(format!("{}{to}", "../".repeat(ups)), p).unwrap();
    }

    /// A block device directory `dir` (named by its last component) with `dev` and `size`,
    /// reachable as class/block/NAME and dev/block/MAJ:MIN.
    fn dev(&self, dir: &str, devnum: &str, sectors: u64) {
        let name = dir.rsplit('/').next().unwrap();
        self.attr(&format!("{dir}/dev"), &format!("{devnum}\n"));
        self.attr(&format!("{dir}/size"), &format!("{sectors}\n"));
        self.link(&format!("class/block/{name}"), dir);
        self.link(&format!("dev/block/{devnum}"), dir);
    }

    fn queue(&self, dir: &str, rotational: &str, scheduler: &str) {
        self.attr(&format!("{dir}/queue/rotational"), rotational);
        self.attr(&format!("{dir}/queue/scheduler"), scheduler);
    }

    /// A SATA/SCSI disk with one partition `<name>1`.
    fn sata_disk(&self, dir: &str, minor_base: u32, rotational: &str, model: &str) {
        let name = dir.rsplit('/').next().unwrap();
        self.dev(dir, &format!("8:{minor_base}"), 7_814_037_168);
        self.queue(dir, rotational, "none [mq-deadline] kyber bfq \n");
        let scsi = dir.trim_end_matches(&format!("/block/{name}"));
        self.attr(&format!("{scsi}/model"), model);
        self.link(&format!("{dir}/device"), scsi);
        let part = format!("{dir}/{name}1");
        self.dev(&part, &format!("8:{}", minor_base + 1), 7_814_035_456);
        self.attr(&format!("{part}/partition"), "1\n");
    }
}

/// One machine with every stack the tests need.
fn machine() -> FakeSys {
    let f = FakeSys::new();
    f.sata_disk(SDA, 0, "1\n", "WDC WD40EFRX-68N\n");
    f.sata_disk(SDB, 16, "1\n", "ST4000DM004-2CV1\n");
    f.sata_disk(SDC, 32, "0\n", "Samsung SSD 870 \n");

    let ns = format!("{NVME_CTRL}/nvme0n1");
    f.dev(&ns, "259:0", 1_953_525_168);
    f.queue(&ns, "0\n", "[none] mq-deadline \n");
    f.attr(
        &format!("{NVME_CTRL}/model"),
        "Samsung SSD 980 PRO 1TB                 \n",
    );
    f.link(&format!("{ns}/device"), NVME_CTRL);

    // loop0 on a file on sda1; loop1 on a file on tmpfs; loop2 unbound.
    for (n, backing) in [
        (0, Some("/var/lib/images/disk.img\n")),
        (1, Some("/dev/shm/x.img\n")),
        (2, None),
    ] {
        let dir = format!("{VIRT}/loop{n}");
        f.dev(
            &dir,
            &format!("7:{n}"),
            if backing.is_some() { 2_097_152 } else { 0 },
        );
        f.queue(&dir, "1\n", "[none] mq-deadline \n");
        if let Some(b) = backing {
            f.attr(&format!("{dir}/loop/backing_file"), b);
        }
    }

    // md0 (raid1 over sdb1 and sdc1), and an LVM volume on it.
    let md0 = format!("{VIRT}/md0");
    f.dev(&md0, "9:0", 7_813_773_312);
    f.queue(&md0, "0\n", "none\n");
    f.attr(&format!("{md0}/md/level"), "raid1\n");
    f.link(&format!("{md0}/slaves/sdb1"), &format!("{SDB}/sdb1"));
    f.link(&format!("{md0}/slaves/sdc1"), &format!("{SDC}/sdc1"));
    let dm0 = format!("{VIRT}/dm-0");
    f.dev(&dm0, "253:0", 2_147_483_648);
    f.queue(&dm0, "0\n", "none\n");
    f.attr(&format!("{dm0}/dm/name"), "vg0-data\n");
    f.link(&format!("{dm0}/slaves/md0"), &md0);

    // dm-1 and dm-2 on each other: a broken tree must not hang us.
    for (a, b) in [(1, 2), (2, 1)] {
        let dir = format!("{VIRT}/dm-{a}");
        f.dev(&dir, &format!("253:{a}"), 8);
        f.attr(&format!("{dir}/dm/name"), &format!("loopy{a}\n"));
        f.link(&format!("{dir}/slaves/dm-{b}"), &format!("{VIRT}/dm-{b}"));
    }
    f
}

fn fake_file_dev(p: &Path) -> Option<(u32, u32)> {
    match p.to_str()? {
        "/var/lib/images/disk.img" => Some((8, 1)),
        "/dev/shm/x.img" => Some((0, 27)),
        _ => None,
    }
}

fn names(devs: &[&BlockDev]) -> Vec<String> {
    devs.iter().map(|d| d.name.clone()).collect()
}

#[test]
fn partition_on_rotational_sata_disk() {
    let f = machine(); // keeps the tree alive
    let sys = f.sysfs();
    let sda1 = sys.by_devnum(8, 1, &fake_file_dev).unwrap();
    assert_eq!(
        (sda1.name.as_str(), sda1.kind),
        ("sda1", DevKind::Partition)
    );
    assert_eq!(sda1.size_bytes, Some(7_814_035_456 * 512));
    assert_eq!(
        sda1.rotational,
        Some(true),
        "a partition reports its disk's queue"
    );
    assert_eq!(sda1.scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!(sda1.model, None);
    let sda = &sda1.below[0];
    assert_eq!((sda.name.as_str(), sda.kind), ("sda", DevKind::Disk));
    assert_eq!(sda.model.as_deref(), Some("WDC WD40EFRX-68N"));
    assert_eq!(names(&leaves(&sda1)), ["sda"]);
    // The same device by name.
    assert_eq!(sys.by_name("sda1", &fake_file_dev).unwrap(), sda1);
}

#[test]
fn nvme_namespace() {
    let d = machine()
        .sysfs()
        .by_name("nvme0n1", &fake_file_dev)
        .unwrap();
    assert_eq!(d.kind, DevKind::Disk);
    assert_eq!(d.rotational, Some(false));
    assert_eq!(d.scheduler.as_deref(), Some("none"));
    assert_eq!(d.model.as_deref(), Some("Samsung SSD 980 PRO 1TB"));
    assert!(d.below.is_empty());
    assert_eq!(names(&leaves(&d)), ["nvme0n1"]);
}

#[test]
fn loop_devices() {
    let f = machine(); // keeps the tree alive
    let sys = f.sysfs();
    let l0 = sys.by_devnum(7, 0, &fake_file_dev).unwrap();
    assert_eq!(l0.kind, DevKind::Loop);
    let backing = l0.loop_backing_file.as_deref();
    assert_eq!(backing, Some(Path::new("/var/lib/images/disk.img")));
    assert_eq!(l0.size_bytes, Some(1 << 30));
    assert_eq!(l0.below[0].name, "sda1");
    assert_eq!(names(&leaves(&l0)), ["sda"]);

    // Backing file on tmpfs: no block device below, not an error.
    let l1 = sys.by_name("loop1", &fake_file_dev).unwrap();
    assert!(l1.below.is_empty());
    // Unbound: a loop device with no backing file.
    let l2 = sys.by_name("loop2", &fake_file_dev).unwrap();
    assert_eq!(
        (l2.kind, l2.loop_backing_file.clone()),
        (DevKind::Loop, None)
    );
}

#[test]
fn md_raid1_over_two_partitions() {
    let md0 = machine().sysfs().by_devnum(9, 0, &fake_file_dev).unwrap();
    assert_eq!(md0.kind, DevKind::Md);
    assert_eq!(md0.md_level.as_deref(), Some("raid1"));
    assert_eq!(md0.scheduler.as_deref(), Some("none"));
    let parts: Vec<_> = md0.below.iter().collect();
    assert_eq!(names(&parts), ["sdb1", "sdc1"]);
    let disks = leaves(&md0);
    assert_eq!(names(&disks), ["sdb", "sdc"]);
    assert_eq!(disks[0].rotational, Some(true));
    assert_eq!(disks[1].rotational, Some(false));
}

#[test]
fn lvm_volume_over_md() {
    let dm0 = machine().sysfs().by_devnum(253, 0, &fake_file_dev).unwrap();
    assert_eq!(dm0.kind, DevKind::Dm);
    assert_eq!(dm0.dm_name.as_deref(), Some("vg0-data"));
    assert_eq!(dm0.size_bytes, Some(1 << 40));
    assert_eq!(dm0.below[0].kind, DevKind::Md);
    assert_eq!(names(&leaves(&dm0)), ["sdb", "sdc"]);
    // serde spells kinds in lowercase.
    let json = serde_json::to_string(&dm0).unwrap();
    assert!(json.contains(r#""kind":"dm""#) && json.contains(r#""kind":"partition""#));
    assert_eq!(serde_json::from_str::<BlockDev>(&json).unwrap(), dm0);
}

#[test]
fn broken_trees_are_errors() {
    let f = machine();
    let sys = f.sysfs();
    let e = sys.by_name("dm-1", &fake_file_dev).unwrap_err();
    assert!(
        matches!(e, SysfsError::Cycle { ref name } if name == "dm-1"),
        "{e}"
    );
    let e = sys.by_devnum(8, 99, &fake_file_dev).unwrap_err();
    assert!(matches!(e, SysfsError::NotFound { .. }), "{e}");
    assert!(e.to_string().contains("8:99"), "{e}");
    assert!(sys.by_name("sdz", &fake_file_dev).is_err());

    f.attr(&format!("{SDA}/size"), "lots\n");
    let e = sys.by_name("sda1", &fake_file_dev).unwrap_err();
    assert!(
        matches!(
            e,
            SysfsError::Parse {
                what: "a number of 512-byte sectors",
                ..
            }
        ),
        "{e}"
    );
    f.attr(&format!("{SDB}/queue/rotational"), "2\n");
    assert!(sys.by_name("md0", &fake_file_dev).is_err());
}

#[test]
fn deep_chains_stop() {
    let f = FakeSys::new();
    for i in 0..=MAX_DEPTH {
        let dir = format!("{VIRT}/dm-{i}");
        f.dev(&dir, &format!("253:{i}"), 8);
        f.attr(&format!("{dir}/dm/name"), "x\n");
        if i > 0 {
            f.link(
                &format!("{dir}/slaves/dm-{}", i - 1),
                &format!("{VIRT}/dm-{}", i - 1),
            );
        }
    }
    let top = MAX_DEPTH as u32;
    let e = f.sysfs().by_devnum(253, top, &fake_file_dev).unwrap_err();
    assert!(matches!(e, SysfsError::TooDeep { .. }), "{e}");
    assert!(f.sysfs().by_devnum(253, top - 1, &fake_file_dev).is_ok());
}

#[test]
fn scheduler_text() {
    assert_eq!(
        parse_scheduler("none [mq-deadline] kyber bfq \n").as_deref(),
        Some("mq-deadline")
    );
    assert_eq!(
        parse_scheduler("[none] mq-deadline").as_deref(),
        Some("none")
    );
    assert_eq!(parse_scheduler("none\n").as_deref(), Some("none"));
    assert_eq!(parse_scheduler("noop deadline"), None);
    assert_eq!(parse_scheduler(""), None);
}

#[test]
fn real_root_device() {
    let dev = std::fs::metadata("/").unwrap().dev();
    let sys = Sysfs::system();
    let d = sys
        .by_devnum(libc::major(dev), libc::minor(dev), &file_dev)
        .unwrap();
    // The uevent route of fs.rs must agree.
    assert_eq!(Some(d.name.clone()), crate::backing_device(dev));
    assert!(d.size_bytes.is_some_and(|s| s > 0));
    for leaf in leaves(&d) {
        assert!(leaf.rotational.is_some(), "{leaf:?}");
    }
    // The machine these tests were written on: ext4 straight on virtio vda.
    if Path::new("/sys/block/vda").exists() {
        assert_eq!((d.name.as_str(), d.kind), ("vda", DevKind::Disk));
        assert!(d.rotational.is_some());
    }
    // Whatever the machine: a disk virtio_blk drives is a VM's, its medium unknown.
    for leaf in leaves(&d) {
        let driver = std::fs::read_link(format!("/sys/block/{}/device/driver", leaf.name));
        if driver.is_ok_and(|l| l.ends_with("virtio_blk")) {
            let why = leaf.virtual_disk.as_deref().unwrap_or_default();
            assert!(why.contains("driver virtio_blk"), "{leaf:?}");
            assert_eq!(leaf.rotates(), None, "{leaf:?}");
        }
    }
}

/// VMs' disks, laid out as their kernels do: virtio_blk as captured on this Firecracker VM
/// (kernel 6.18: `vda` under a virtio-pci function, `vendor` 0x1af4, rotational 1), and
/// xen-blkfront (`vbd` on the `xen` bus), Hyper-V's storvsc (SCSI under a VMBus device),
/// VMware's PVSCSI and QEMU's emulated SATA disk, from their drivers' sysfs registration.
fn vms() -> FakeSys {
    let f = FakeSys::new();
    // virtio_blk, with a partition.
    let pci = "devices/pci0000:00/0000:00:02.0";
    let vda = format!("{pci}/virtio1/block/vda");
    f.dev(&vda, "254:0", 104_857_600);
    f.queue(&vda, "1\n", "[none] mq-deadline \n");
    f.link(&format!("{vda}/device"), &format!("{pci}/virtio1"));
    f.link(
        &format!("{pci}/virtio1/driver"),
        "bus/virtio/drivers/virtio_blk",
    );
    f.link(&format!("{pci}/virtio1/subsystem"), "bus/virtio");
    f.attr(&format!("{pci}/virtio1/vendor"), "0x1af4\n");
    f.link(&format!("{pci}/driver"), "bus/pci/drivers/virtio-pci");
    f.link(&format!("{pci}/subsystem"), "bus/pci");
    f.dev(&format!("{vda}/vda1"), "254:1", 104_855_552);
    f.attr(&format!("{vda}/vda1/partition"), "1\n");
    // xen-blkfront.
    let xvda = "devices/vbd-51712/block/xvda";
    f.dev(xvda, "202:0", 16_777_216);
    f.queue(xvda, "1\n", "[none] mq-deadline \n");
    f.link(&format!("{xvda}/device"), "devices/vbd-51712");
    f.link("devices/vbd-51712/driver", "bus/xen/drivers/vbd");
    f.link("devices/vbd-51712/subsystem", "bus/xen");
    // Hyper-V: a SCSI disk under a VMBus device served by hv_storvsc.
    let vmbus =
        "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/f8b3781a-1e82-4818-a1c3-63d806ec15bb";
    let scsi = format!("{vmbus}/host0/target0:0:0/0:0:0:0");
    let hv = format!("{scsi}/block/sdh");
    f.dev(&hv, "8:112", 266_338_304);
    f.queue(&hv, "1\n", "[mq-deadline] none \n");
    f.link(&format!("{hv}/device"), &scsi);
    f.attr(&format!("{scsi}/vendor"), "Msft    \n");
    f.attr(&format!("{scsi}/model"), "Virtual Disk    \n");
    f.link(&format!("{vmbus}/driver"), "bus/vmbus/drivers/hv_storvsc");
    f.link(&format!("{vmbus}/subsystem"), "bus/vmbus");
    // VMware PVSCSI.
    let pvscsi = "devices/pci0000:00/0000:00:15.0/0000:03:00.0";
    let scsi = format!("{pvscsi}/host2/target2:0:0/2:0:0:0");
    let vm = format!("{scsi}/block/sdv");
    f.dev(&vm, "65:80", 83_886_080);
    f.queue(&vm, "1\n", "[mq-deadline] none \n");
    f.link(&format!("{vm}/device"), &scsi);
    f.attr(&format!("{scsi}/vendor"), "VMware  \n");
    f.attr(&format!("{scsi}/model"), "Virtual disk    \n");
    f.link(&format!("{pvscsi}/driver"), "bus/pci/drivers/vmw_pvscsi");
    // QEMU's emulated SATA disk: an ordinary AHCI port, known by its model alone.
    f.sata_disk(SDA, 0, "1\n", "QEMU HARDDISK   \n");
    f
}

#[test]
fn vm_disks_have_no_known_medium() {
    let f = vms();
    let sys = f.sysfs();
    for (name, why) in [
        (
            "vda",
            "driver virtio_blk, driver virtio-pci, on the virtio bus",
        ),
        (
            "vda1",
            "driver virtio_blk, driver virtio-pci, on the virtio bus",
        ),
        ("xvda", "driver vbd, on the Xen bus (xen-blkfront)"),
        (
            "sdh",
            "driver hv_storvsc, on Hyper-V's VMBus (storvsc), Msft Virtual Disk",
        ),
        ("sdv", "driver vmw_pvscsi, VMware Virtual disk"),
        ("sda", "QEMU HARDDISK"),
    ] {
        let d = sys.by_name(name, &fake_file_dev).unwrap();
        assert_eq!(d.virtual_disk.as_deref(), Some(why), "{name}");
        assert_eq!(
            d.rotational,
            Some(true),
            "{name}: the kernel's flag is kept as it is"
        );
        assert_eq!(d.rotates(), None, "{name}: its medium is unknown");
    }
}

#[test]
fn physical_disks_keep_their_medium() {
    let f = machine();
    let sys = f.sysfs();
    for (name, rotates) in [
        ("sda", true),
        ("sdc", false),
        ("nvme0n1", false),
        ("sda1", true),
    ] {
        let d = sys.by_name(name, &fake_file_dev).unwrap();
        assert_eq!(d.virtual_disk, None, "{name}");
        assert_eq!(d.rotates(), Some(rotates), "{name}");
    }
}
