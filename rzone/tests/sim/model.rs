//! The reference model: null_blk's zoned mode transcribed from
//! `drivers/block/null_blk/zoned.c`, sequential, with plain counters
//! under no lock, as obviously like the C as Rust allows. The property
//! tests run the same operations on it and on `rzone::zones::Zones`.

use rzone::cond::{Cond, Status, ZoneType};
use rzone::config::Geometry;
use rzone::zones::{CondError, ZoneInfo};

/// null_blk's `NULL_ZONE_INVALID_WP`.
const INVALID_WP: u64 = u64::MAX;

#[derive(Clone, Debug)]
struct Zone {
    start: u64,
    len: u64,
    capacity: u64,
    wp: u64,
    ty: ZoneType,
    cond: Cond,
}

/// A null_blk zoned device (`struct nullb_device`'s zone fields).
pub struct Model {
    zones: Vec<Zone>,
    zone_size_sects: u64,
    nr_conv: usize,
    max_open: u32,
    max_active: u32,
    append_max: u32,
    need_res: bool,
    imp_open: u32,
    exp_open: u32,
    closed: u32,
    imp_close_zone_no: usize,
}

impl Model {
    /// `null_init_zoned_dev()` after the checks (made by `validate`).
    pub fn new(g: &Geometry) -> Model {
        let mut zones = Vec::new();
        let mut sector = 0;
        for i in 0..g.nr_zones as usize {
            let len = g.zone_sectors.min(g.dev_sectors - sector);
            let z = if i < g.nr_conv as usize {
                Zone {
                    start: sector,
                    len,
                    capacity: len,
                    wp: sector + len,
                    ty: ZoneType::Conventional,
                    cond: Cond::NotWp,
                }
            } else {
                let capacity = len.min(g.capacity_sectors);
                let (cond, wp) = if g.full {
                    (Cond::Full, sector + capacity)
                } else {
                    (Cond::Empty, sector)
                };
                Zone {
                    start: sector,
                    len,
                    capacity,
                    wp,
                    ty: ZoneType::SeqWriteReq,
                    cond,
                }
            };
            zones.push(z);
            sector += g.zone_sectors;
        }
        Model {
            zones,
            zone_size_sects: g.zone_sectors,
            nr_conv: g.nr_conv as usize,
            max_open: g.max_open,
            max_active: g.max_active,
            append_max: g.append_max_sectors,
            need_res: g.max_open != 0 || g.max_active != 0,
            imp_open: 0,
            exp_open: 0,
            closed: 0,
            imp_close_zone_no: g.nr_conv as usize,
        }
    }

    fn zone_no(&self, sector: u64) -> usize {
        (sector / self.zone_size_sects) as usize
    }

    /// (implicitly open, open, active), as `Res` keeps them.
    pub fn counts(&self) -> (u32, u32, u32) {
        (
            self.imp_open,
            self.imp_open + self.exp_open,
            self.imp_open + self.exp_open + self.closed,
        )
    }

    pub fn report(&self, zno: usize) -> ZoneInfo {
        let z = &self.zones[zno];
        ZoneInfo {
            start: z.start,
            len: z.len,
            capacity: z.capacity,
            wp: z.wp,
            ty: z.ty,
            cond: z.cond,
        }
    }

    pub fn nr_zones(&self) -> usize {
        self.zones.len()
    }

    /// `null_zone_valid_read_len()` and the offline check.
    pub fn read(&self, sector: u64, nr: u64) -> Result<u64, Status> {
        let zno = self.zone_no(sector);
        let z = &self.zones[zno];
        if z.cond == Cond::Offline {
            return Err(Status::IoErr);
        }
        if z.ty == ZoneType::Conventional || sector + nr <= z.wp {
            return Ok(nr);
        }
        if sector > z.wp {
            return Ok(0);
        }
        Ok(z.wp - sector)
    }

    fn close_imp_open_zone(&mut self) {
        let mut zno = self.imp_close_zone_no;
        if zno >= self.zones.len() {
            zno = self.nr_conv;
        }
        for _ in self.nr_conv..self.zones.len() {
            let i = zno;
            zno += 1;
            if zno >= self.zones.len() {
                zno = self.nr_conv;
            }
            let z = &mut self.zones[i];
            if z.cond == Cond::ImpOpen {
                self.imp_open -= 1;
                if z.wp == z.start {
                    z.cond = Cond::Empty;
                } else {
                    z.cond = Cond::Closed;
                    self.closed += 1;
                }
                self.imp_close_zone_no = zno;
                return;
            }
        }
    }

    fn check_active(&self) -> Result<(), Status> {
        if self.max_active == 0 || self.exp_open + self.imp_open + self.closed < self.max_active {
            return Ok(());
        }
        Err(Status::ZoneActiveResource)
    }

    fn check_open(&mut self) -> Result<(), Status> {
        if self.max_open == 0 || self.exp_open + self.imp_open < self.max_open {
            return Ok(());
        }
        if self.imp_open > 0 && self.check_active().is_ok() {
            self.close_imp_open_zone();
            return Ok(());
        }
        Err(Status::ZoneOpenResource)
    }

    fn check_zone_resources(&mut self, zno: usize) -> Result<(), Status> {
        match self.zones[zno].cond {
            Cond::Empty => {
                self.check_active()?;
                self.check_open()
            }
            Cond::Closed => self.check_open(),
            _ => Err(Status::IoErr),
        }
    }

    /// `null_zone_write()`: the sector written.
    pub fn write(&mut self, mut sector: u64, nr: u64, append: bool) -> Result<u64, Status> {
        let zno = self.zone_no(sector);
        if self.zones[zno].ty == ZoneType::Conventional {
            if append {
                return Err(Status::IoErr);
            }
            return Ok(sector);
        }
        if append {
            if self.append_max == 0 || self.zones[zno].wp == INVALID_WP {
                return Err(Status::IoErr);
            }
            sector = self.zones[zno].wp;
        }
        let z = &self.zones[zno];
        if sector != z.wp || z.wp + nr > z.start + z.capacity {
            return Err(Status::IoErr);
        }
        if matches!(z.cond, Cond::Closed | Cond::Empty) {
            if self.need_res {
                self.check_zone_resources(zno)?;
                if self.zones[zno].cond == Cond::Closed {
                    self.closed -= 1;
                }
                self.imp_open += 1;
            }
            self.zones[zno].cond = Cond::ImpOpen;
        }
        let z = &mut self.zones[zno];
        z.wp += nr;
        if z.wp == z.start + z.capacity {
            if self.need_res {
                if z.cond == Cond::ExpOpen {
                    self.exp_open -= 1;
                } else if z.cond == Cond::ImpOpen {
                    self.imp_open -= 1;
                }
            }
            z.cond = Cond::Full;
        }
        Ok(sector)
    }

    fn open_zone(&mut self, zno: usize) -> Result<(), Status> {
        match self.zones[zno].cond {
            Cond::ExpOpen => return Ok(()),
            Cond::Empty | Cond::ImpOpen | Cond::Closed => {}
            _ => return Err(Status::IoErr),
        }
        if self.need_res {
            match self.zones[zno].cond {
                Cond::Empty => self.check_zone_resources(zno)?,
                Cond::ImpOpen => self.imp_open -= 1,
                Cond::Closed => {
                    self.check_zone_resources(zno)?;
                    self.closed -= 1;
                }
                _ => {}
            }
            self.exp_open += 1;
        }
        self.zones[zno].cond = Cond::ExpOpen;
        Ok(())
    }

    fn close_zone(&mut self, zno: usize) -> Result<(), Status> {
        match self.zones[zno].cond {
            Cond::Closed => return Ok(()),
            Cond::ImpOpen | Cond::ExpOpen => {}
            _ => return Err(Status::IoErr),
        }
        let z = &self.zones[zno];
        if self.need_res {
            match z.cond {
                Cond::ImpOpen => self.imp_open -= 1,
                Cond::ExpOpen => self.exp_open -= 1,
                _ => {}
            }
            if z.wp > z.start {
                self.closed += 1;
            }
        }
        let z = &mut self.zones[zno];
        z.cond = if z.wp == z.start {
            Cond::Empty
        } else {
            Cond::Closed
        };
        Ok(())
    }

    fn finish_zone(&mut self, zno: usize) -> Result<(), Status> {
        if self.need_res {
            match self.zones[zno].cond {
                Cond::Full => return Ok(()),
                Cond::Empty => self.check_zone_resources(zno)?,
                Cond::ImpOpen => self.imp_open -= 1,
                Cond::ExpOpen => self.exp_open -= 1,
                Cond::Closed => {
                    self.check_zone_resources(zno)?;
                    self.closed -= 1;
                }
                _ => return Err(Status::IoErr),
            }
        }
        let z = &mut self.zones[zno];
        z.cond = Cond::Full;
        z.wp = z.start + z.len;
        Ok(())
    }

    fn reset_zone(&mut self, zno: usize, discards: &mut Vec<(u64, u64)>) -> Result<(), Status> {
        if self.need_res {
            match self.zones[zno].cond {
                Cond::ImpOpen => self.imp_open -= 1,
                Cond::ExpOpen => self.exp_open -= 1,
                Cond::Closed => self.closed -= 1,
                Cond::Empty | Cond::Full => {}
                _ => return Err(Status::IoErr),
            }
        }
        let z = &mut self.zones[zno];
        z.cond = Cond::Empty;
        z.wp = z.start;
        discards.push((z.start, z.len));
        Ok(())
    }

    /// `null_zone_mgmt()`: `op` is one of "open", "close", "finish",
    /// "reset", "reset_all".
    pub fn mgmt(
        &mut self,
        op: &str,
        sector: u64,
        discards: &mut Vec<(u64, u64)>,
    ) -> Result<(), Status> {
        if op == "reset_all" {
            for i in self.nr_conv..self.zones.len() {
                if !matches!(
                    self.zones[i].cond,
                    Cond::Empty | Cond::ReadOnly | Cond::Offline
                ) {
                    let _ = self.reset_zone(i, discards);
                }
            }
            return Ok(());
        }
        let zno = self.zone_no(sector);
        if matches!(self.zones[zno].cond, Cond::ReadOnly | Cond::Offline) {
            return Err(Status::IoErr);
        }
        if self.zones[zno].ty == ZoneType::Conventional {
            return Err(Status::IoErr);
        }
        match op {
            "open" => self.open_zone(zno),
            "close" => self.close_zone(zno),
            "finish" => self.finish_zone(zno),
            "reset" => self.reset_zone(zno, discards),
            _ => unreachable!(),
        }
    }

    /// `zone_cond_store()` and `null_set_zone_cond()`, except that a
    /// zone's counts go even when its finish fails (null_blk would leave
    /// a closed zone counted).
    pub fn set_cond(
        &mut self,
        sector: u64,
        cond: Cond,
        discards: &mut Vec<(u64, u64)>,
    ) -> Result<(), CondError> {
        let zno = self.zone_no(sector);
        if zno >= self.zones.len() {
            return Err(CondError::OutOfRange);
        }
        if self.zones[zno].ty == ZoneType::Conventional {
            return Err(CondError::Conventional);
        }
        if self.zones[zno].cond == cond {
            let z = &mut self.zones[zno];
            z.cond = Cond::Empty;
            z.wp = z.start;
            discards.push((z.start, z.len));
        } else {
            let c = self.zones[zno].cond;
            if c != Cond::ReadOnly && c != Cond::Offline && self.finish_zone(zno).is_err() {
                // The deviation: give back what the zone holds.
                if self.need_res && c == Cond::Closed {
                    self.closed -= 1;
                }
            }
            let z = &mut self.zones[zno];
            z.cond = cond;
            z.wp = INVALID_WP;
        }
        Ok(())
    }
}
