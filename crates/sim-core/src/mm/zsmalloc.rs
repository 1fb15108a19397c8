//! zsmalloc's footprint (temporary stand-in).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ZsHandle(pub(crate) u32);

#[derive(Debug, Default)]
pub(crate) struct ZsPool {
    sizes: Vec<u32>,
    free: Vec<u32>,
    bytes: u64,
    objects: u64,
}

impl ZsPool {
    pub(crate) fn new() -> ZsPool {
        ZsPool::default()
    }
    pub(crate) fn malloc(&mut self, len: u32) -> ZsHandle {
        let len = len.div_ceil(16) * 16;
        self.bytes += u64::from(len);
        self.objects += 1;
        match self.free.pop() {
            Some(i) => {
                self.sizes[i as usize] = len;
                ZsHandle(i)
            }
            None => {
                self.sizes.push(len);
                ZsHandle(self.sizes.len() as u32 - 1)
            }
        }
    }
    pub(crate) fn free(&mut self, h: ZsHandle) {
        self.bytes -= u64::from(self.sizes[h.0 as usize]);
        self.objects -= 1;
        self.free.push(h.0);
    }
    pub(crate) fn total_pages(&self) -> u64 {
        self.bytes.div_ceil(4096)
    }
    pub(crate) fn objects(&self) -> u64 {
        self.objects
    }
    pub(crate) fn object_size(&self, h: ZsHandle) -> u32 {
        self.sizes[h.0 as usize]
    }
    pub(crate) fn check(&self) -> Result<(), String> {
        Ok(())
    }
}
