"""morello from Python: optimal tensor kernels for a target machine, found by search under a cost
model and emitted as C with SIMD intrinsics.

>>> import numpy as np, morello
>>> impl = morello.search("matmul 64x64x64", target="x86", no_db=True)
>>> impl.cost > 0
True
>>> kernel = impl.compile()              # the C built as a shared library, verified, loaded
>>> a = np.random.rand(64, 64).astype(np.float32)
>>> b = np.random.rand(64, 64).astype(np.float32)
>>> np.allclose(kernel(a, b), a @ b, rtol=1e-5)
True

Searches use the memo table the ``morello`` command uses (the target's default table in
``$XDG_CACHE_HOME/morello/``), ``db=PATH`` another one, ``no_db=True`` none. Every error is a
:class:`MorelloError` carrying the Rust error's text. A search releases the GIL, and Ctrl-C
(``KeyboardInterrupt``) cancels it: what it solved is saved first. See ``docs/python.md``.
"""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _morello
from ._morello import MODEL_VERSION, MorelloError

__all__ = ["MODEL_VERSION", "Impl", "Kernel", "MorelloError", "Schedule", "search"]

PathLike = Union[str, "os.PathLike[str]"]


def search(
    spec: str,
    *,
    target: str = "x86",
    dtype: str = "f32",
    batch: int = 1,
    accum: bool = False,
    epilogue: Optional[str] = None,
    rhs_layout: Optional[str] = None,
    from_layout: Optional[str] = None,
    to_layout: Optional[str] = None,
    memory: Optional[str] = None,
    processors: Optional[int] = None,
    db: Optional[PathLike] = None,
    no_db: bool = False,
    jobs: Optional[int] = None,
    time_limit: Optional[float] = None,
) -> "Impl":
    """The optimal implementation of ``spec`` under ``target``'s cost model.

    ``spec`` is what ``morello search`` takes: a shorthand (``"matmul 256x256x256"``,
    ``"softmax 32x1024"``, ``"zero 64x64"``, ``"move 64x64"`` with ``from_layout`` and
    ``to_layout``, ``"conv 1x4x8x8 8x4x3x3"``) or the full spec text. The keyword arguments are the
    CLI's flags: ``target`` (``x86``, ``x86-avx2``, ``x86-avx2-vnni``, ``x86-avx512``, ``arm-neon``
    or a target file), ``dtype`` (``f32``, ``u32``, ``bf16``, ``u8s8s32``, ...), ``batch``, ``accum``,
    ``epilogue`` (``"bias"``, ``"bias,relu"``, ``"bias,gelu"``), ``rhs_layout``, ``memory``
    (``"L1=16KiB,VRF=8"``), ``processors`` (default: this machine's cores), ``db``/``no_db``,
    ``jobs`` (search threads) and ``time_limit`` (seconds; past it the best of a quick search is
    returned with a ``RuntimeWarning``).

    Raises :class:`MorelloError` for bad input or a failed search, ``KeyboardInterrupt`` when
    interrupted.
    """
    prepared = _morello.prepare(
        spec,
        target=target,
        dtype=dtype,
        batch=batch,
        accum=accum,
        epilogue=epilogue,
        rhs_layout=rhs_layout,
        from_layout=from_layout,
        to_layout=to_layout,
        memory=memory,
        processors=processors,
        db=None if db is None else os.fspath(db),
        no_db=no_db,
        jobs=jobs,
        time_limit=time_limit,
    )
    native = _morello.search(prepared)
    return Impl(native)


class Impl:
    """A solved implementation of a spec: its cost, tree and C, and ways to run and time it."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def cost(self) -> int:
        """The cost under the target's cost model (lower is better)."""
        return self._native.cost

    @property
    def spec(self) -> str:
        """The spec it implements, as spec text."""
        return self._native.spec

    @property
    def target(self) -> str:
        """The target's name."""
        return self._native.target

    @property
    def peaks(self) -> Dict[str, int]:
        """Peak memory per level (bytes; registers for register files)."""
        return self._native.peaks

    @property
    def stats(self) -> Dict[str, Any]:
        """The search's statistics: specs solved, memo hits, seconds, why it stopped."""
        return self._native.stats

    def tree(self) -> str:
        """The implementation tree as ``morello search`` prints it."""
        return self._native.tree()

    def json(self) -> Any:
        """The implementation tree as JSON data (``morello search --emit json``'s ``impl``)."""
        return json.loads(self._native.json())

    def c_source(self) -> str:
        """The C translation unit (``morello search --emit c``)."""
        return self._native.c_source()

    def schedule(self) -> str:
        """The implementation as schedule text (``morello search --emit schedule``), for
        :meth:`Schedule.apply_text` or ``morello search --schedule FILE`` to read back."""
        return self._native.schedule()

    def top_k(self, k: int) -> List["Impl"]:
        """The model's ``k`` best implementations of the spec whose C differs, this one first
        (the candidates ``morello bench --top-k`` times)."""
        return [Impl(n) for n in self._native.top_k(k)]

    def compile(self, verify: bool = True) -> "Kernel":
        """The kernel compiled as a shared library and loaded: a callable on numpy arrays.

        With ``verify`` (the default) the same C is first run on seeded inputs and checked
        against morello's reference interpreter, as ``morello run`` does; a mismatch raises
        :class:`MorelloError`.
        """
        return Kernel(self._native.library(verify))

    def bench(
        self,
        baselines: Optional[Sequence[str]] = None,
        *,
        samples: int = 5,
        min_sample_seconds: float = 0.2,
        threads: Optional[int] = None,
        seed: int = 1,
        caches: str = "warm",
        cpu: Optional[int] = None,
        versus: Optional[Dict[str, "Impl"]] = None,
    ) -> Dict[str, Any]:
        """Verifies the kernel, then times it beside ``baselines`` (``"openblas"``, ``"blis"``,
        ``"libxsmm"``, ``"mkl"``, ``"onednn"``, ``"xnnpack"``, ``"naive"``, ``"gemm"``; default
        all; ``[]`` none) in one run: the dict ``morello bench --json`` prints, the kernel
        labelled ``morello``. ``threads`` defaults to the target's processors (the
        ``processors`` it was searched with). ``versus`` times other implementations of the same
        spec and target in the same run, ``{"hand": impl}`` labelled ``morello-hand``, with
        ``morello_speedup`` the first's speedup over each."""
        names = ["all"] if baselines is None else (list(baselines) or ["none"])
        text = self._native.bench_json(
            names,
            samples,
            min_sample_seconds,
            0 if threads is None else threads,
            seed,
            caches,
            cpu,
            [(name, impl._native) for name, impl in (versus or {}).items()],
        )
        return json.loads(text)

    def __repr__(self) -> str:
        return repr(self._native)


class Schedule:
    """The first rewrites of a spec by hand, completed by the search.

    >>> s = morello.Schedule("matmul 512x512x512")
    >>> impl = s.tile_out([1, 64, 512]).to_accum().split(64).synthesize()

    ``Schedule(spec, **options)`` takes the arguments of :func:`search`. Each step goes to the
    first sub-spec still open (a loop's body, a move's body, the accumulating stage of
    ``to_accum``) and is checked at once: a step the search could not take there raises
    :class:`MorelloError` naming the step, the spec and why, and is not kept. Steps chain.
    :meth:`synthesize` completes every open sub-spec from the memo table (searching what is
    missing) into an :class:`Impl`. See ``docs/schedules.md`` for every step.
    """

    def __init__(self, spec: str, **options: Any) -> None:
        if options.get("db") is not None:
            options["db"] = os.fspath(options["db"])
        self._native = _morello.Schedule(_morello.prepare(spec, **options))

    @classmethod
    def of(cls, impl: Impl) -> "Schedule":
        """A schedule of ``impl``'s spec, on its target and table."""
        schedule = cls.__new__(cls)
        schedule._native = _morello.Schedule.of(impl._native)
        return schedule

    @property
    def spec(self) -> str:
        """The scheduled spec, as spec text."""
        return self._native.spec

    def tile_out(self, shape: Sequence[int]) -> "Schedule":
        """Tile the output to ``shape`` (one serial loop per dim that changes)."""
        self._native.tile_out(list(shape))
        return self

    def split(self, size: int) -> "Schedule":
        """Tile the one reduction dim to ``size`` (after :meth:`to_accum`)."""
        self._native.split(size)
        return self

    def tile(self, dim: str, size: int) -> "Schedule":
        """Tile the iteration dim named ``dim`` (``"m"``, ``"k"``, ``"n"``) to ``size``."""
        self._native.tile(dim, size)
        return self

    def parallel(self, shape: Sequence[int]) -> "Schedule":
        """One parallel loop over output tiles of ``shape``."""
        self._native.parallel(list(shape))
        return self

    def move_to(
        self,
        operand: Union[int, str],
        level: str,
        layout: Optional[str] = None,
        vector_size: Optional[int] = None,
    ) -> "Schedule":
        """Move an operand (index or name) to ``level`` (``"L1"``, ``"VRF"``), optionally in
        ``layout`` with vectors of ``vector_size`` elements."""
        self._native.move_to(operand, level, layout, vector_size)
        return self

    def pack(
        self, operand: Union[int, str], level: str, layout: str, vector_size: Optional[int] = None
    ) -> "Schedule":
        """Copy an operand into a new buffer at ``level`` in ``layout`` (never a cache view)."""
        self._native.pack(operand, level, layout, vector_size)
        return self

    def to_accum(self) -> "Schedule":
        """Zero the output, then accumulate into it."""
        self._native.to_accum()
        return self

    def peel(self, size: int) -> "Schedule":
        """Compute the first ``size`` of the reduction, then accumulate the rest."""
        self._native.peel(size)
        return self

    def select(self, kernel: str) -> "Schedule":
        """Implement the open sub-spec with the kernel named ``kernel``."""
        self._native.select(kernel)
        return self

    def apply_text(self, text: str) -> "Schedule":
        """Apply schedule text (one step per line, ``#`` comments, ``sub PATH { ... }``)."""
        self._native.apply_text(text)
        return self

    def subschedule(self, path: Sequence[int], steps: Any) -> "Schedule":
        """Schedule the node at ``path`` (child indices) with ``steps(sub)``, a callable that adds
        steps to ``sub``, a schedule of that node."""

        def call(native: Any) -> None:
            sub = Schedule.__new__(Schedule)
            sub._native = native
            steps(sub)

        self._native.subschedule(list(path), call)
        return self

    def open_leaves(self) -> List[str]:
        """The sub-specs no step has implemented yet, in execution order."""
        return self._native.open_leaves()

    def tree(self) -> str:
        """The tree so far (open sub-specs as leaves of cost 0)."""
        return self._native.tree()

    def synthesize(self) -> Impl:
        """Complete every open sub-spec from the memo table; the implementation."""
        return Impl(self._native.synthesize())

    def __repr__(self) -> str:
        return repr(self._native)


def _bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 values as bfloat16 bits (round to nearest, ties to even), in uint16."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    return (rounded >> np.uint32(16)).astype(np.uint16)


class _Param:
    """One pointer parameter of a kernel, and how a numpy array maps onto its buffer."""

    def __init__(self, info: Dict[str, Any]) -> None:
        self.name: str = info["name"]
        self.role: str = info["role"]
        self.shape: Tuple[int, ...] = tuple(info["shape"])
        self.elements: int = info["elements"]
        self.bf16 = info["dtype"] == "bfloat16"
        self.dtype = np.dtype(np.uint16 if self.bf16 else info["dtype"])
        strides = info.get("strides")
        self.strides: Optional[Tuple[int, ...]] = None if strides is None else tuple(strides)
        offsets = info.get("offsets")
        self.offsets = None if offsets is None else np.frombuffer(offsets, dtype="<u8").astype(np.intp)

    @property
    def reads(self) -> bool:
        return self.role in ("input", "inout")

    @property
    def writes(self) -> bool:
        return self.role in ("output", "inout")

    def full_shape(self, array: np.ndarray) -> np.ndarray:
        """``array`` with the parameter's shape: leading dims of 1 it leaves out are added."""
        drop = len(self.shape) - array.ndim
        if drop < 0 or any(d != 1 for d in self.shape[:drop]) or tuple(array.shape) != self.shape[drop:]:
            raise MorelloError(
                f"parameter `{self.name}` has shape {'x'.join(map(str, self.shape))}, "
                f"but the array has shape {'x'.join(map(str, array.shape)) or 'scalar'}"
            )
        return array.reshape(self.shape)

    def leading_ones(self) -> int:
        """How many leading dims of the shape are 1."""
        count = 0
        for d in self.shape:
            if d != 1:
                break
            count += 1
        return count

    def passes_directly(self, array: np.ndarray) -> bool:
        """Whether ``array``'s memory is this parameter's buffer as it is (no copy)."""
        if self.strides is None or array.dtype != self.dtype:
            return False
        if self.writes and not array.flags.writeable:
            return False
        item = array.dtype.itemsize
        return all(
            size == 1 or stride == want * item
            for size, stride, want in zip(array.shape, array.strides, self.strides)
        )

    def view(self, buffer: np.ndarray) -> np.ndarray:
        """The tensor in ``buffer`` (strided layouts only)."""
        item = buffer.dtype.itemsize
        assert self.strides is not None
        return np.lib.stride_tricks.as_strided(
            buffer, shape=self.shape, strides=tuple(s * item for s in self.strides)
        )

    def converted(self, array: Any) -> np.ndarray:
        """``array`` in the parameter's element type (bf16 from float32 values or uint16 bits)."""
        array = np.asarray(array)
        if self.bf16:
            if array.dtype == np.uint16:
                return array
            if array.dtype.kind != "f":
                raise MorelloError(f"parameter `{self.name}` is bf16: pass float32 values or uint16 bits")
            return _bf16_bits(array)
        if array.dtype != self.dtype and not np.can_cast(array.dtype, self.dtype, casting="same_kind"):
            raise MorelloError(
                f"parameter `{self.name}` is {self.dtype}, and {array.dtype} does not convert to it "
                f"without changing kind"
            )
        return array

    def buffer_from(self, array: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The buffer to pass for ``array`` (the array itself when its memory is the buffer, else a
        copy in the layout), and the tensor view of it."""
        if self.passes_directly(array):
            return array, array
        buffer = np.empty(self.elements, dtype=self.dtype)
        if self.offsets is not None:
            buffer[self.offsets] = array.astype(self.dtype, copy=False).reshape(-1)
            return buffer, buffer
        view = self.view(buffer)
        view[...] = array
        return buffer, view

    def result(self, buffer: np.ndarray, view: np.ndarray) -> np.ndarray:
        """The tensor the kernel wrote, from its buffer."""
        if self.offsets is not None:
            return buffer[self.offsets].reshape(self.shape)
        return view


class Kernel:
    """A compiled kernel: call it with numpy arrays.

    ``kernel(*inputs, out=None)`` takes one array per operand the kernel reads, in operand order
    (``lhs, rhs`` for a matmul, ``lhs, rhs, out`` for an accumulating one, ``lhs, rhs, bias`` with
    an epilogue, ``src`` for a move), and returns what it writes (one array, or a tuple). Arrays
    may leave out leading dims of 1 (a matmul's batch of 1); the result then leaves them out too.
    An array whose dtype and memory order match the operand's layout is passed without a copy (a
    C-contiguous float32 array for a row-major f32 operand); others are converted and copied
    into the layout. ``out`` (an array, or a tuple of arrays) receives the written operands
    instead of new arrays.
    """

    def __init__(self, library: Any) -> None:
        self._library = library  # keeps the library's directory alive
        self._dll = ctypes.CDLL(library.path)
        self._function = getattr(self._dll, library.function)
        self._function.restype = None
        self.params: List[_Param] = [_Param(p) for p in library.params]
        self._function.argtypes = [ctypes.c_void_p] * len(self.params)

    @property
    def source(self) -> str:
        """The C source the library was built from."""
        return self._library.source

    @property
    def path(self) -> str:
        """The shared library's path."""
        return self._library.path

    @property
    def max_abs_error(self) -> Optional[float]:
        """The largest error of the verification run (``None`` if not verified)."""
        return self._library.max_abs_error

    @property
    def openmp(self) -> bool:
        """Whether its parallel loops run on OpenMP threads."""
        return self._library.openmp

    def __call__(self, *arrays: Any, out: Any = None) -> Any:
        return self.bind(*arrays, out=out)()

    def bind(self, *arrays: Any, out: Any = None) -> Callable[[], Any]:
        """The call on these arrays, prepared: a function of no arguments that runs the kernel and
        returns what it wrote, as ``kernel(*arrays, out=out)`` does. Conversions and copies into
        the operands' layouts are made once, here, so repeated calls time the kernel alone (plus
        one ctypes call). The inputs' values are those they had when bound, unless an input is
        passed without a copy (its dtype and memory order match the operand's layout): then each
        call reads it as it is then."""
        readers = [p for p in self.params if p.reads]
        writers = [p for p in self.params if p.writes and not p.reads]
        if len(arrays) != len(readers):
            names = ", ".join(p.name for p in readers) or "none"
            raise MorelloError(f"the kernel takes {len(readers)} arrays ({names}), not {len(arrays)}")
        outs: List[Any] = [] if out is None else list(out) if isinstance(out, (tuple, list)) else [out]
        if outs and len(outs) != len(writers):
            raise MorelloError(f"out= takes {len(writers)} arrays, not {len(outs)}")
        given = iter(arrays)
        given_outs = iter(outs)
        drop = None
        pointers = []
        buffers = []  # every buffer lives as long as the bound call
        written = []
        for param in self.params:
            if param.reads:
                original = param.converted(next(given))
                dropped = len(param.shape) - original.ndim
                drop = dropped if drop is None else min(drop, dropped)
                buffer, view = param.buffer_from(param.full_shape(original))
            elif outs:
                target = np.asarray(next(given_outs))
                if not param.passes_directly(param.full_shape(target)):
                    raise MorelloError(
                        f"out= for `{param.name}` must be a writable {param.dtype} array in the operand's "
                        f"layout (strides {param.strides} in elements)"
                    )
                buffer = view = param.full_shape(target)
            else:
                buffer = np.empty(param.elements, dtype=param.dtype)
                view = buffer if param.offsets is not None else param.view(buffer)
            pointers.append(buffer.ctypes.data)
            buffers.append(buffer)
            if param.writes:
                keep = min(drop or 0, param.leading_ones())
                written.append((param, buffer, view, param.shape[keep:]))
        function = self._function
        arguments = tuple(pointers)

        def call() -> Any:
            function(*arguments)
            results = [param.result(buffer, view).reshape(shape) for param, buffer, view, shape in written]
            return results[0] if len(results) == 1 else tuple(results)

        call.buffers = buffers  # type: ignore[attr-defined]
        return call
