//! Tests of targets: built-ins, files, validation errors, round trips.

use super::*;

fn avx2() -> Target {
    Target::builtin("x86-avx2", 2).unwrap()
}

#[test]
fn builtins_have_the_documented_levels() {
    let t = avx2();
    assert_eq!(t.level_names(), ["GL", "L2", "L1", "VRF", "RF"]);
    let vrf = t.level(t.level_id("vrf").unwrap());
    assert_eq!((vrf.capacity, vrf.vector_bytes.as_slice()), (16, &[16u32, 32][..]));
    assert_eq!(t.level(t.level_id("L1").unwrap()).capacity, 32 * 1024);
    assert_eq!(t.level(t.level_id("L2").unwrap()).capacity, 1 << 20);
    let avx512 = Target::builtin("x86-avx512", 2).unwrap();
    let vrf = avx512.level(avx512.level_id("VRF").unwrap());
    assert_eq!((vrf.capacity, vrf.vector_bytes.as_slice()), (32, &[16u32, 32, 64][..]));
    assert!(avx512.kernels().contains(&KernelKind::DotProductBf16));
    assert!(!t.kernels().contains(&KernelKind::DotProductBf16));
    assert_eq!(
        Target::builtin("arm", 2).unwrap_err().to_string(),
        "unknown target `arm`; built-in targets are x86, x86-avx2, x86-avx2-vnni, x86-avx512 and arm-neon, or give a target file"
    );
}

#[test]
fn x86_avx2_vnni_is_x86_avx2_with_avx_vnni() {
    let (avx2, vnni) = (avx2(), Target::builtin("x86-avx2-vnni", 2).unwrap());
    assert_eq!(vnni.level_names(), avx2.level_names());
    assert_eq!(vnni.costs(), avx2.costs());
    assert!(vnni.has_isa(IsaFeature::Avxvnni) && !avx2.has_isa(IsaFeature::Avxvnni));
    assert!(!vnni.has_isa(IsaFeature::Avx512f));
    let added: Vec<KernelKind> =
        vnni.kernels().iter().copied().filter(|k| !avx2.kernels().contains(k)).collect();
    assert_eq!(added, [KernelKind::BroadcastQuadDotAvx]);
    assert!(avx2.kernels().iter().all(|k| vnni.kernels().contains(k)));
    assert_ne!(vnni.fingerprint(), avx2.fingerprint());
    let avx512 = Target::builtin("x86-avx512", 2).unwrap();
    assert!(!avx512.kernels().contains(&KernelKind::BroadcastQuadDotAvx));
    let text = vnni.description_value().to_toml().unwrap();
    assert!(text.contains("\"avxvnni\""), "{text}");
    assert_eq!(Target::from_toml(&text).unwrap(), vnni);
}

#[test]
fn arm_neon_is_a_neoverse_n1_like_core() {
    let t = Target::builtin("arm-neon", 2).unwrap();
    assert_eq!(t.architecture(), Some(Architecture::Aarch64));
    assert_eq!(avx2().architecture(), Some(Architecture::X86_64));
    assert_eq!(t.level_names(), ["GL", "L2", "L1", "VRF", "RF"]);
    let vrf = t.level(t.level_id("VRF").unwrap());
    assert_eq!((vrf.capacity, vrf.vector_bytes.as_slice()), (32, &[16u32][..]));
    let l1 = t.level(t.level_id("L1").unwrap()).geometry.unwrap();
    let l2 = t.level(t.level_id("L2").unwrap()).geometry.unwrap();
    assert_eq!((l1.capacity(), l1.ways, l1.sets), (64 << 10, 4, 256));
    assert_eq!((l2.capacity(), l2.ways, l2.sets), (1 << 20, 8, 2048));
    assert!(t.kernels().contains(&KernelKind::BroadcastVecMultAdd));
    assert!(!t.kernels().contains(&KernelKind::DotProductLoop));
    assert!(t.kernels().iter().all(|k| k.required_isa().iter().all(|f| t.has_isa(*f))));
    let text = t.description_value().to_toml().unwrap();
    assert_eq!(Target::from_toml(&text).unwrap(), t);
}

#[test]
fn a_target_of_two_architectures_is_refused() {
    let mut desc = avx2().description_value();
    desc.isa.push("neon".into());
    let error = Target::new(desc).unwrap_err().to_string();
    assert!(error.contains("`avx2` (x86_64) and `neon` (aarch64) belong to two architectures"), "{error}");
}

#[test]
fn descriptions_round_trip_through_toml_and_json() {
    for t in [avx2(), Target::builtin("x86-avx512", 4).unwrap()] {
        let desc = t.description_value();
        let toml_text = toml::to_string(&desc).unwrap();
        assert_eq!(Target::from_toml(&toml_text).unwrap(), t);
        let json_text = serde_json::to_string(&desc).unwrap();
        assert_eq!(Target::from_json(&json_text).unwrap(), t);
        assert_eq!(Target::from_json(&json_text).unwrap().fingerprint(), t.fingerprint());
    }
    assert_ne!(avx2().fingerprint(), Target::builtin("x86-avx2", 3).unwrap().fingerprint());
}

#[test]
fn to_toml_writes_readable_sizes_and_reads_back_the_same_target() {
    for t in [avx2(), Target::builtin("x86-avx512", 2).unwrap()] {
        let text = t.description_value().to_toml().unwrap();
        assert!(text.contains("capacity = \"1MiB\"") && text.contains("capacity = \"32KiB\""), "{text}");
        let back = Target::from_toml(&text).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.fingerprint(), t.fingerprint());
    }
}

#[test]
fn other_cost_constants_give_another_fingerprint() {
    // Memo tables are named and checked by fingerprint: a calibrated target file never shares a
    // table with the built-in target it came from.
    let t = avx2();
    let mut costs = t.costs().clone();
    costs.parallel_setup += 1;
    assert_ne!(t.with_costs(costs).fingerprint(), t.fingerprint());
    let mut desc = t.description_value();
    desc.levels[1].cost_per_line += 1;
    assert_ne!(Target::new(desc).unwrap().fingerprint(), t.fingerprint());
}

const TPU_LIKE: &str = r#"
name = "tpu-like"
description = "registers / VMEM / HBM"
cache_line_bytes = 128
processors = 1
kernels = ["MultAdd", "ValueAssign", "ValueFill", "MemsetZero"]

[[levels]]
name = "HBM"
kind = "memory"
capacity = "16GiB"
cost_per_line = 40
parallel = true
moves_to = ["VMEM"]

[[levels]]
name = "VMEM"
kind = "memory"
capacity = "16MiB"
cost_per_line = 4
moves_to = ["REG"]

[[levels]]
name = "REG"
kind = "scalar-registers"
capacity = 32
"#;

#[test]
fn a_register_vmem_hbm_target_from_a_file() {
    let t = Target::from_toml(TPU_LIKE).unwrap();
    assert_eq!(t.level_names(), ["HBM", "VMEM", "REG"]);
    assert_eq!(t.level(LevelId(0)).capacity, 16 << 30);
    assert_eq!(t.level(LevelId(0)).moves_to, [LevelId(1)]);
    assert_eq!(t.costs(), &CostConstants::default());
    // Vector loads cost a level's line unless the file says otherwise.
    assert_eq!(t.level(LevelId(1)).vector_cost_per_line(), 4);
    let cheap = Target::from_toml(
        &TPU_LIKE.replace("cost_per_line = 4", "cost_per_line = 4\nload_cost_per_line = 1"),
    )
    .unwrap();
    assert_eq!(
        (cheap.level(LevelId(1)).cost_per_line, cheap.level(LevelId(1)).vector_cost_per_line()),
        (4, 1)
    );
    assert_ne!(cheap.fingerprint(), t.fingerprint());
    assert_eq!(Target::from_toml(&cheap.description_value().to_toml().unwrap()).unwrap(), cheap);
}

#[test]
fn invalid_files_say_what_is_wrong() {
    // Each case: TPU_LIKE with one text replaced, and what the error must say.
    let cases = [
        ("moves_to = [\"VMEM\"]", "moves_to = [\"SRAM\"]", "level `HBM` moves to unknown level `SRAM`"),
        ("capacity = 32", "capacity = -3", "cannot read the target description"),
        ("capacity = 32", "capacity = 0", "level `REG` has capacity 0"),
        ("capacity = \"16MiB\"", "capacity = \"16 parsecs\"", "`16 parsecs` is not a size"),
        ("moves_to = [\"REG\"]", "moves_to = [\"HBM\"]", "moves go from slower to faster levels"),
        ("processors = 1", "processors = 0", "processors must be at least 1"),
        ("\"MultAdd\"", "\"FancyKernel\"", "cannot read the target description"),
        ("kind = \"scalar-registers\"", "kind = \"vector-registers\"", "needs vector_bytes"),
        ("cache_line_bytes = 128", "cache_line_bytes = 100", "power of two"),
        ("name = \"VMEM\"", "name = \"hbm\"", "used twice"),
        ("processors = 1", "processors = 1\nisa = [\"sse9\"]", "unknown ISA feature `sse9`"),
        ("\"MemsetZero\"", "\"DotProductBf16\"", "needs the ISA feature `avx512f`"),
        ("name = \"REG\"", "name = \"REG\"\ncolour = \"red\"", "unknown field `colour`"),
    ];
    for (from, to, message) in cases {
        let text = TPU_LIKE.replace(from, to);
        assert_ne!(text, TPU_LIKE, "{from:?} is in the file");
        let err = Target::from_toml(&text).unwrap_err().to_string();
        assert!(err.contains(message), "expected {message:?} in {err:?}");
        assert!(!err.contains('\n'), "one line: {err:?}");
    }
    assert!(Target::from_json("{not json").unwrap_err().to_string().starts_with("cannot read"));
}

#[test]
fn x86_resolves_on_this_host() {
    // The host of the test suite is x86-64 with at least AVX2 (the project's supported platform).
    let resolved = resolve_target("x86").unwrap();
    let expected =
        if [IsaFeature::Avx512f, IsaFeature::Avx512bw, IsaFeature::Avx512vl].iter().all(|f| f.on_host()) {
            "x86-avx512"
        } else if IsaFeature::Avxvnni.on_host() {
            "x86-avx2-vnni"
        } else {
            "x86-avx2"
        };
    assert_eq!(resolved.target.name(), expected);
    assert!(resolved.note.unwrap().starts_with(&format!("x86 resolved to {expected} (")));
    assert_eq!(resolve_target("x86-avx2").unwrap().note, None);
}

#[test]
fn sizes_parse_with_suffixes() {
    assert_eq!(parse_size("32KiB"), Ok(32768));
    assert_eq!(parse_size("1 MiB"), Ok(1 << 20));
    assert_eq!(parse_size("12"), Ok(12));
    assert!(parse_size("99999999999TiB").is_err());
}

#[test]
fn builtin_caches_have_the_documented_geometry() {
    for t in [avx2(), Target::builtin("x86-avx512", 2).unwrap()] {
        let l1 = t.level(t.level_id("L1").unwrap()).geometry.unwrap();
        let l2 = t.level(t.level_id("L2").unwrap()).geometry.unwrap();
        assert_eq!((l1.line_bytes, l1.ways, l1.sets), (64, 8, 64));
        assert_eq!((l2.line_bytes, l2.ways, l2.sets), (64, 16, 1024));
        assert_eq!(t.set_period_bytes(), Some(64 << 10));
        assert_eq!(t.min_ways(), Some(8));
        assert_eq!(t.level(t.level_id("GL").unwrap()).geometry, None);
    }
    assert_eq!(Target::from_toml(TPU_LIKE).unwrap().set_period_bytes(), None);
}

#[test]
fn cache_geometry_in_files() {
    let cache =
        TPU_LIKE.replace("kind = \"memory\"\ncapacity = \"16MiB\"", "kind = \"cache\"\ncapacity = \"16MiB\"");
    assert_ne!(cache, TPU_LIKE, "the fixture has a 16 MiB memory level");
    let with =
        |fields: &str| cache.replace("capacity = \"16MiB\"", &format!("capacity = \"16MiB\"\n{fields}"));
    let t = Target::from_toml(&with("ways = 16")).unwrap();
    let g = t.level(LevelId(1)).geometry.unwrap();
    // Lines default to the target's 128 bytes: 16 MiB / (16 x 128) sets.
    assert_eq!((g.line_bytes, g.ways, g.sets), (128, 16, 8192));
    assert_eq!(Target::from_toml(&t.description_value().to_toml().unwrap()).unwrap(), t);
    let explicit = Target::from_toml(&with("ways = 16\nsets = 16384\nline_bytes = 64")).unwrap();
    assert_eq!(explicit.level(LevelId(1)).geometry.unwrap().sets, 16384);
    assert_ne!(explicit.fingerprint(), t.fingerprint());
    for (fields, message) in [
        ("sets = 64", "gives sets or line_bytes without ways"),
        ("ways = 0", "ways must be at least 1"),
        ("ways = 16\nline_bytes = 96", "line_bytes a power of two"),
        ("ways = 3", "is not a whole number of sets of 3 ways"),
        ("ways = 16\nsets = 100", "sets must be a power of two"),
        ("ways = 16\nsets = 64", "is 131072 bytes, not its capacity 16777216"),
    ] {
        let err = Target::from_toml(&with(fields)).unwrap_err().to_string();
        assert!(err.contains(message), "{fields}: expected {message:?} in {err:?}");
    }
    let err = Target::from_toml(&TPU_LIKE.replace("capacity = \"16MiB\"", "capacity = \"16MiB\"\nways = 4"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not a cache but gives ways"), "{err}");
}

#[test]
fn host_caches_parse_from_sysfs_text_and_apply_to_x86_only() {
    let l1 = HostCache::from_sysfs("1\n", "Data\n", "32K\n", "8\n", "64\n", "64\n").unwrap();
    let l1i = HostCache::from_sysfs("1", "Instruction", "32K", "8", "64", "64").unwrap();
    let l2 = HostCache::from_sysfs("2", "Unified", "512K", "8", "1024", "64").unwrap();
    let l3 = HostCache::from_sysfs("3", "Unified", "32768K", "16", "32768", "64").unwrap();
    assert_eq!(
        (l1.kind, l1.size_bytes, l1.ways, l1.sets, l1.line_bytes),
        (HostCacheKind::Data, 32768, 8, 64, 64)
    );
    assert_eq!(l2.size_bytes, 512 << 10);
    assert!(HostCache::from_sysfs("1", "Data", "32Q", "8", "64", "64").unwrap_err().contains("size"));
    assert!(HostCache::from_sysfs("1", "Other", "32K", "8", "64", "64").unwrap_err().contains("type"));
    let caches = [l1i, l1, l2, l3];
    let x86 = resolve_target_on_host("x86", &caches).unwrap();
    let t = &x86.target;
    let g = t.level(t.level_id("L2").unwrap());
    assert_eq!((g.capacity, g.geometry.unwrap().ways, g.geometry.unwrap().sets), (512 << 10, 8, 1024));
    assert!(x86.note.unwrap().ends_with("the host's caches: L1d 32 KiB 8-way, L2 512 KiB 8-way"));
    // The named targets keep their documented defaults whatever the host.
    assert_eq!(
        resolve_target_on_host("x86-avx2", &caches).unwrap().target,
        avx2().with_processors(t.processors()).unwrap()
    );
    // An inconsistent description (size != sets x ways x line) is ignored, not half-applied.
    let odd = HostCache { sets: 1000, ..l2 };
    let t = resolve_target_on_host("x86", &[l1, odd]).unwrap().target;
    assert_eq!(t.level(t.level_id("L2").unwrap()).capacity, 1 << 20);
}

/// `x86` on an AVX-512 host without AVX-512 BF16 (Cascade Lake, Ice Lake) keeps the VNNI kernels
/// and drops the bf16 ones, so no search picks a kernel the host cannot run.
#[test]
fn x86_drops_the_features_the_host_lacks() {
    let full = Target::builtin("x86-avx512", 1).unwrap();
    let mut desc = full.description_value();
    let lacking = builtin::keep_host_features(&mut desc, |f| f != IsaFeature::Avx512bf16);
    assert_eq!(lacking, [IsaFeature::Avx512bf16]);
    let t = Target::new(desc).unwrap();
    assert!(!t.has_isa(IsaFeature::Avx512bf16) && t.has_isa(IsaFeature::Avx512vnni));
    assert!(full.kernels().iter().any(|k| k.required_isa().contains(&IsaFeature::Avx512bf16)));
    assert!(t.kernels().iter().all(|k| !k.required_isa().contains(&IsaFeature::Avx512bf16)));
    assert!(t.kernels().contains(&KernelKind::BroadcastQuadDot));
    assert_ne!(t.fingerprint(), full.fingerprint());
    // A host with every feature changes nothing.
    let mut same = full.description_value();
    assert!(builtin::keep_host_features(&mut same, |_| true).is_empty());
    assert_eq!(Target::new(same).unwrap().fingerprint(), full.fingerprint());
}
