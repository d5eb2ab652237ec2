//! The slice of LLVM's C API the LLVM code generator uses, loaded at run
//! time from the host's `libLLVM` (`dlopen`), and the ORC `LLJIT` that
//! owns a program's code.
//!
//! Why at run time and not through `llvm-sys`: a link-time LLVM makes
//! every embedder's build need LLVM's development files and
//! `llvm-config`, and the binary fail to start without `libLLVM`.  Loaded
//! at run time, the build stays pure Rust and a host without `libLLVM`
//! (or with another major version) gets the Cranelift code generator,
//! byte-identical and up to ~30 % slower on shading (docs/shaders.md).  A host
//! that runs Mesa's llvmpipe already has the library: Debian 12's
//! llvmpipe 22.3 links `libLLVM-15`.
//!
//! The IR is handed over as text (`LLVMParseIRInContext`): one call
//! instead of one FFI call per instruction, and the text is what
//! `FERROPIPE_JIT_DISASM` prints.  The C API used is the same in LLVM 14
//! and 15, the versions Debian 12 ships (llvmpipe 22.3 there links 15); the
//! IR differs only in its pointers (typed in 14, `ptr` from 15 on), which
//! the emitter writes per version.  [`LLVM_ENV`] picks one version.

use std::ffi::{CStr, CString, c_char, c_void};

use super::super::JitError;

type Ptr = *mut c_void;

/// The libraries tried, in order: `(major version, soname)`.
const LIBRARIES: [(u32, &str); 4] = [
    (15, "libLLVM-15.so.1"),
    (15, "libLLVM-15.so"),
    (14, "libLLVM-14.so.1"),
    (14, "libLLVM-14.so"),
];

/// Set to a major version (`14` or `15`) to load only that LLVM.
pub const LLVM_ENV: &str = "FERROPIPE_LLVM";

/// The C API functions, resolved from the library.
struct Fns {
    init: [unsafe extern "C" fn(); 4],
    create_tsctx: unsafe extern "C" fn() -> Ptr,
    tsctx_context: unsafe extern "C" fn(Ptr) -> Ptr,
    dispose_tsctx: unsafe extern "C" fn(Ptr),
    membuf_copy: unsafe extern "C" fn(*const c_char, usize, *const c_char) -> Ptr,
    parse_ir: unsafe extern "C" fn(Ptr, Ptr, *mut Ptr, *mut *mut c_char) -> i32,
    verify_module: unsafe extern "C" fn(Ptr, i32, *mut *mut c_char) -> i32,
    dispose_module: unsafe extern "C" fn(Ptr),
    dispose_message: unsafe extern "C" fn(*mut c_char),
    create_tsm: unsafe extern "C" fn(Ptr, Ptr) -> Ptr,
    create_builder: unsafe extern "C" fn() -> Ptr,
    detect_host: unsafe extern "C" fn(*mut Ptr) -> Ptr,
    set_jtmb: unsafe extern "C" fn(Ptr, Ptr),
    create_lljit: unsafe extern "C" fn(*mut Ptr, Ptr) -> Ptr,
    main_dylib: unsafe extern "C" fn(Ptr) -> Ptr,
    add_ir: unsafe extern "C" fn(Ptr, Ptr, Ptr) -> Ptr,
    lookup: unsafe extern "C" fn(Ptr, *mut u64, *const c_char) -> Ptr,
    dispose_lljit: unsafe extern "C" fn(Ptr) -> Ptr,
    error_message: unsafe extern "C" fn(Ptr) -> *mut c_char,
    dispose_error_message: unsafe extern "C" fn(*mut c_char),
}

/// A loaded `libLLVM` with the functions above.
pub(in crate::jit) struct Llvm {
    fns: Fns,
    major: u32,
    // Last: the functions above point into it.
    _lib: libloading::Library,
}

fn err(what: impl Into<String>) -> JitError {
    JitError::Llvm(what.into())
}

impl Llvm {
    /// Loads the host's `libLLVM` (once per program compiled: `dlopen` of
    /// a loaded library only counts a reference) and initializes its x86
    /// target (idempotent: LLVM allows repeated initialization).
    pub(in crate::jit) fn load() -> Result<Llvm, JitError> {
        let only = std::env::var(LLVM_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty());
        let mut last = String::from("none tried");
        for (major, name) in LIBRARIES {
            if only
                .as_deref()
                .is_some_and(|v| v.trim() != major.to_string())
            {
                continue;
            }
            // SAFETY: loading libLLVM runs its static constructors, which
            // register LLVM's own command-line options and targets and
            // touch nothing of this process.
            match unsafe { libloading::Library::new(name) } {
                Ok(lib) => return Llvm::resolve(lib, major),
                Err(e) => last = e.to_string(),
            }
        }
        Err(err(format!("no libLLVM 15 or 14 on this host ({last})")))
    }

    /// The library's major version.
    pub(in crate::jit) fn major(&self) -> u32 {
        self.major
    }

    fn resolve(lib: libloading::Library, major: u32) -> Result<Llvm, JitError> {
        macro_rules! f {
            ($name:literal) => {{
                // SAFETY: the symbol is the LLVM 14/15 C API function of that
                // name, whose C signature is the field's type (llvm-c/
                // Core.h, IRReader.h, Analysis.h, Orc.h, LLJIT.h, Error.h).
                let s = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| err(format!("{}: {e}", $name)))?;
                *s
            }};
        }
        let fns = Fns {
            init: [
                f!("LLVMInitializeX86TargetInfo"),
                f!("LLVMInitializeX86Target"),
                f!("LLVMInitializeX86TargetMC"),
                f!("LLVMInitializeX86AsmPrinter"),
            ],
            create_tsctx: f!("LLVMOrcCreateNewThreadSafeContext"),
            tsctx_context: f!("LLVMOrcThreadSafeContextGetContext"),
            dispose_tsctx: f!("LLVMOrcDisposeThreadSafeContext"),
            membuf_copy: f!("LLVMCreateMemoryBufferWithMemoryRangeCopy"),
            parse_ir: f!("LLVMParseIRInContext"),
            verify_module: f!("LLVMVerifyModule"),
            dispose_module: f!("LLVMDisposeModule"),
            dispose_message: f!("LLVMDisposeMessage"),
            create_tsm: f!("LLVMOrcCreateNewThreadSafeModule"),
            create_builder: f!("LLVMOrcCreateLLJITBuilder"),
            detect_host: f!("LLVMOrcJITTargetMachineBuilderDetectHost"),
            set_jtmb: f!("LLVMOrcLLJITBuilderSetJITTargetMachineBuilder"),
            create_lljit: f!("LLVMOrcCreateLLJIT"),
            main_dylib: f!("LLVMOrcLLJITGetMainJITDylib"),
            add_ir: f!("LLVMOrcLLJITAddLLVMIRModule"),
            lookup: f!("LLVMOrcLLJITLookup"),
            dispose_lljit: f!("LLVMOrcDisposeLLJIT"),
            error_message: f!("LLVMGetErrorMessage"),
            dispose_error_message: f!("LLVMDisposeErrorMessage"),
        };
        // LLVM's target registry is process-wide and its registration
        // checks-then-writes without a lock: two threads creating their
        // first shaders at once must not both run it.  The guard is
        // process-wide because that state is: it exists once per process
        // whatever this crate does.
        static INIT: std::sync::Once = std::sync::Once::new();
        INIT.call_once(|| {
            for init in fns.init {
                // SAFETY: the x86 target initializers take no arguments and
                // may run any number of times.
                unsafe { init() };
            }
        });
        Ok(Llvm {
            fns,
            major,
            _lib: lib,
        })
    }

    /// Turns an `LLVMErrorRef` into a result (consuming the error).
    fn check(&self, e: Ptr, what: &str) -> Result<(), JitError> {
        if e.is_null() {
            return Ok(());
        }
        // SAFETY: `e` is a live error LLVM returned; `LLVMGetErrorMessage`
        // consumes it and returns a C string we dispose after copying.
        let msg = unsafe {
            let m = (self.fns.error_message)(e);
            let s = CStr::from_ptr(m).to_string_lossy().into_owned();
            (self.fns.dispose_error_message)(m);
            s
        };
        Err(err(format!("{what}: {msg}")))
    }

    /// Parses `ir`, compiles it with a new `LLJIT` for the host and
    /// returns the JIT with the address of each function in `names`.
    pub(in crate::jit) fn compile(
        self,
        ir: &str,
        names: &[String],
    ) -> Result<(LlvmCode, Vec<*const u8>), JitError> {
        let f = &self.fns;
        // SAFETY: every call below is an LLVM 14/15 C API call with arguments
        // of the types and ownership its header gives: the target machine
        // builder is owned by the JIT builder, which `LLVMOrcCreateLLJIT`
        // owns (also on error); the JIT by `LlvmCode` from then on (freed
        // on every later error path by its `Drop`); the memory buffer by
        // `LLVMParseIRInContext`; the module by us until it verifies
        // (`LLVMDisposeModule` otherwise), then by the thread-safe module,
        // which `LLVMOrcLLJITAddLLVMIRModule` owns (also on error); our
        // reference to the thread-safe context is dropped once the module
        // that holds one is made.
        // Every returned error is consumed by `check`.  C strings passed
        // in are NUL-terminated and outlive the calls.
        unsafe {
            let mut jtmb: Ptr = std::ptr::null_mut();
            self.check((f.detect_host)(&mut jtmb), "host detection")?;
            let builder = (f.create_builder)();
            (f.set_jtmb)(builder, jtmb);
            let mut jit: Ptr = std::ptr::null_mut();
            self.check((f.create_lljit)(&mut jit, builder), "LLJIT")?;
            let code = LlvmCode { jit, llvm: self };
            let f = &code.llvm.fns;
            let tsctx = (f.create_tsctx)();
            let ctx = (f.tsctx_context)(tsctx);
            let name = c"ferropipe";
            let buf = (f.membuf_copy)(ir.as_ptr().cast(), ir.len(), name.as_ptr());
            let mut module: Ptr = std::ptr::null_mut();
            let mut msg: *mut c_char = std::ptr::null_mut();
            if (f.parse_ir)(ctx, buf, &mut module, &mut msg) != 0 {
                let s = if msg.is_null() {
                    String::from("(no message)")
                } else {
                    let s = CStr::from_ptr(msg).to_string_lossy().into_owned();
                    (f.dispose_message)(msg);
                    s
                };
                (f.dispose_tsctx)(tsctx);
                return Err(err(format!("IR does not parse: {s}")));
            }
            // The parser checks syntax and types, not the rest of LLVM's
            // rules (phis at the top of their block, dominance); IR
            // breaking those crashed the code generator.  Verified, it is
            // an error, and the program runs on the interpreter.
            // (`LLVMReturnStatusAction` = 2: report, do not abort.)
            let mut msg: *mut c_char = std::ptr::null_mut();
            if (f.verify_module)(module, 2, &mut msg) != 0 {
                let s = if msg.is_null() {
                    String::from("(no message)")
                } else {
                    CStr::from_ptr(msg).to_string_lossy().into_owned()
                };
                if !msg.is_null() {
                    (f.dispose_message)(msg);
                }
                (f.dispose_module)(module);
                (f.dispose_tsctx)(tsctx);
                return Err(err(format!("IR does not verify: {s}")));
            }
            if !msg.is_null() {
                (f.dispose_message)(msg);
            }
            let tsm = (f.create_tsm)(module, tsctx);
            (f.dispose_tsctx)(tsctx);
            let dylib = (f.main_dylib)(jit);
            code.llvm
                .check((f.add_ir)(jit, dylib, tsm), "adding the module")?;
            let mut ptrs = Vec::with_capacity(names.len());
            for n in names {
                let cname = CString::new(n.as_str()).map_err(|e| err(e.to_string()))?;
                let mut addr = 0u64;
                code.llvm
                    .check((f.lookup)(jit, &mut addr, cname.as_ptr()), "lookup")?;
                if addr == 0 {
                    return Err(err(format!("{n} has no address")));
                }
                ptrs.push(addr as usize as *const u8);
            }
            if let Some(dir) = std::env::var_os(DUMP_ENV) {
                for (n, &p) in names.iter().zip(&ptrs) {
                    dump_code(std::path::Path::new(&dir), n, p);
                }
            }
            Ok((code, ptrs))
        }
    }
}

/// Set to a directory to have each compiled function's machine code
/// written there as `PID-ADDRESS-NAME.bin` (from its first byte to the
/// end of its mapping, at most 64 KiB), a developer's aid: `perf record`
/// cannot name or annotate JIT code, and `benches/jit_annotate.py`
/// puts its samples on the disassembled instructions with this.  That is
/// how the level lookup's latency chain (docs/performance.md, "Where the
/// time goes", 2026-12-07 fifth session) was found.
pub const DUMP_ENV: &str = "FERROPIPE_JIT_DUMP";

/// [`DUMP_ENV`]'s file for function `name` at `p` (errors are ignored:
/// a developer's aid must not fail a compile).
fn dump_code(dir: &std::path::Path, name: &str, p: *const u8) {
    let addr = p as usize;
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    // the readable mapping holding `addr`: `START-END PERMS ...`
    let end = maps.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (a, b) = f.next()?.split_once('-')?;
        let (a, b) = (
            usize::from_str_radix(a, 16).ok()?,
            usize::from_str_radix(b, 16).ok()?,
        );
        let readable = f.next()?.starts_with('r');
        (readable && a <= addr && addr < b).then_some(b)
    });
    let Some(end) = end else { return };
    let len = (end - addr).min(1 << 16);
    // SAFETY: `addr..addr + len` lies inside one readable mapping of this
    // process (`/proc/self/maps` above): the JIT's code pages, which stay
    // mapped and unchanged while the `LlvmCode` that owns them lives (the
    // caller holds it).
    let bytes = unsafe { std::slice::from_raw_parts(p, len) };
    let file = dir.join(format!("{}-{addr:x}-{name}.bin", std::process::id()));
    let _ = std::fs::write(file, bytes);
}

/// A program's LLVM code: the `LLJIT` that owns its pages (read-execute
/// once linked) and the library it lives in.
pub(in crate::jit) struct LlvmCode {
    jit: Ptr,
    llvm: Llvm,
}

impl Drop for LlvmCode {
    fn drop(&mut self) {
        // SAFETY: the JIT is dropped with its `JitCode`, which the
        // program's `Arc` owns: no call into its code can be running and no
        // function pointer survives (they live only in that `JitCode`).
        // The library is still loaded (`llvm` drops after this).
        let e = unsafe { (self.llvm.fns.dispose_lljit)(self.jit) };
        // a failure to free leaks; there is nothing else to do with it
        let _ = self.llvm.check(e, "disposing the JIT");
    }
}

// SAFETY: after compilation the JIT is only touched by `Drop` (nothing
// else holds its pointer); its code pages are immutable and read-execute,
// so sharing the function pointers between threads is as safe as sharing a
// `fn` item, and LLVM allows disposing a JIT from any thread.
unsafe impl Send for LlvmCode {}
// SAFETY: as above: no method of the JIT is called through `&self`.
unsafe impl Sync for LlvmCode {}
