//===- CoreProgram.h - what one core of the mesh executes -------*- C++ -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// The program of one compute engine, in the terms of the Cerebras SDK
// (shared/reference/wse-mesh-programming.md, section 1): buffers in the
// core's SRAM; tasks that run to completion, each started by a wavelet of
// its color (a data task) or activated by another task or by the end of an
// asynchronous operation (a local task); and, in a task's body, vector
// operations whose operands are data structure descriptors over memory, a
// fabric input or a fabric output, or a register. An operation with
// `async` set runs as a microthread beside the tasks and may activate a
// local task when it ends; a blocked task is not started until it is
// unblocked. Cursors stand for the DSD offsets a program
// advances (`@increment_dsd_offset`): a memory operand may add a cursor's
// value to its offset.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_SIM_MESH_COREPROGRAM_H
#define CGPT_SIM_MESH_COREPROGRAM_H

#include <cstdint>
#include <string>
#include <vector>

namespace cgpt::sim::mesh {

/// What one element of a buffer or a stream is: an f32, or a 16-bit float
/// (two to a wavelet).
enum class ElementType : uint8_t { f32, bf16 };

inline int64_t bytesOf(ElementType type) {
  return type == ElementType::f32 ? 4 : 2;
}
/// Elements one 32-bit wavelet carries.
inline int64_t perWavelet(ElementType type) {
  return type == ElementType::f32 ? 1 : 2;
}
/// The element of a kernel whose elements are `elementBytes` wide: 16-bit
/// ones (bf16 or fp16, which move and cost alike) or f32.
inline ElementType elementTypeOf(int64_t elementBytes) {
  return elementBytes <= 2 ? ElementType::bf16 : ElementType::f32;
}

/// A buffer a program allocates in its core's SRAM.
struct BufferDecl {
  std::string name;
  int64_t elements = 0;
  ElementType type = ElementType::f32;
  /// The values its first elements hold when the program loads: the
  /// constants the program was built with (the others start at 0).
  std::vector<float> initial;
  int64_t bytes() const { return elements * bytesOf(type); }
};

/// A data structure descriptor: where an operation's elements are.
struct Dsd {
  enum class Kind : uint8_t { none, memory, fabricIn, fabricOut, reg, zero };
  Kind kind = Kind::none;
  /// memory: the buffer, its first element and the step between elements;
  /// the value of `cursor`, when given, is added to `offset`. A circular
  /// one wraps around its buffer (the SDK's `circbuf_dsd`).
  int buffer = -1;
  int64_t offset = 0, stride = 1;
  int cursor = -1;
  bool circular = false;
  /// memory: when given, the element of buffer `index` at the cursor's
  /// value, an integer held as f32, is added to `offset` in place of the
  /// cursor's value: an offset the task sets from data, as the SDK's DSD
  /// builtins set one (`@increment_dsd_offset`).
  int index = -1;
  /// fabricIn, fabricOut: the color.
  int color = -1;
  /// reg: the register (a data task's wavelet is register 0) and which of
  /// its two 16-bit halves, for a wavelet of two.
  int reg = -1;
  bool high = false;

  static Dsd memory(int buffer, int64_t offset = 0, int cursor = -1,
                    int64_t stride = 1) {
    Dsd d;
    d.kind = Kind::memory;
    d.buffer = buffer;
    d.offset = offset;
    d.cursor = cursor;
    d.stride = stride;
    return d;
  }
  /// Buffer `buffer` at the offset that element `cursor` of buffer `index`
  /// holds.
  static Dsd indexed(int buffer, int index, int cursor) {
    Dsd d = memory(buffer, 0, cursor);
    d.index = index;
    return d;
  }
  static Dsd ring(int buffer) {
    Dsd d = memory(buffer);
    d.circular = true;
    return d;
  }
  static Dsd in(int color) {
    Dsd d;
    d.kind = Kind::fabricIn;
    d.color = color;
    return d;
  }
  static Dsd out(int color) {
    Dsd d;
    d.kind = Kind::fabricOut;
    d.color = color;
    return d;
  }
  static Dsd argument(bool high = false, int reg = 0) {
    Dsd d;
    d.kind = Kind::reg;
    d.reg = reg;
    d.high = high;
    return d;
  }
  static Dsd zero() {
    Dsd d;
    d.kind = Kind::zero;
    return d;
  }
  bool isFabric() const {
    return kind == Kind::fabricIn || kind == Kind::fabricOut;
  }
};

/// One step of a task's body.
struct Op {
  enum class Kind : uint8_t {
    /// dst = src0 + src1 * scalar, elementwise (@fmacs, @fmachs).
    fmac,
    /// dst = src0 + src1 (@fadds); src1 may be a register.
    fadd,
    /// dst = src0 * src1 (@fmuls).
    fmul,
    /// dst = max(src0, src1) (@fmaxs).
    fmax,
    /// dst = src0 (@fmovs).
    fmov,
    /// dst = the first estimate of 1 / sqrt(src0) a software reciprocal
    /// square root starts from: the f32's bits shifted right by one and
    /// taken from 0x5f3759df, two 32-bit integer operations an element
    /// (Newton's steps, the program's own operations, refine it).
    rsqrtEstimate,
    /// dst = src0 2^src1, src1 an integer held as f32: the integer added
    /// to src0's exponent bits, two 32-bit integer operations an element
    /// (a software exponential's last step).
    scaleByPowerOfTwo,
    /// dst = src0's bits read as a 32-bit integer, converted to f32: one
    /// 32-bit integer operation an element (a software logarithm's first
    /// estimate, log2 x ~ bits 2^-23 - 127).
    bitsToFloat,
    /// Marks local task `target` active.
    activate,
    /// Blocks task `target`, local or data: a blocked task is not started,
    /// though it stays active or its wavelets wait (@block).
    block,
    /// Unblocks task `target` (@unblock): a local task runs once it is
    /// both active and unblocked, which joins two asynchronous operations.
    unblock,
    /// Advances cursor `target` by `by` steps.
    advance,
    /// Runs the next `target` operations `by` times (a loop in the task's
    /// code); loops nest.
    loop,
  };
  Kind kind = Kind::fmov;
  Dsd dst, src0, src1, scalar;
  /// Elements the operation covers.
  int64_t length = 0;
  /// A fabric operation's length from data, as the SDK's `@set_dsd_length`
  /// sets one: when given, the element of buffer `lengthFrom` at cursor
  /// `lengthCursor`'s value, an integer held as f32. `length` is then what
  /// a run without values takes, the program choosing lengths that move
  /// as many wavelets in all.
  int lengthFrom = -1, lengthCursor = -1;
  /// The arithmetic's operands: f32, or 16-bit floats summed in f32. It
  /// sets the SIMD width and the bytes each element reads.
  ElementType type = ElementType::f32;
  /// Runs as a microthread beside the tasks; activates local task `onDone`
  /// (if any) when it ends.
  bool async = false;
  int onDone = -1;
  /// activate, block, unblock: the task; advance: the cursor; loop: the
  /// operations it repeats.
  int target = -1;
  /// advance: the steps; loop: the times.
  int64_t by = 1;

  static Op vector(Kind kind, Dsd dst, Dsd src0, Dsd src1, int64_t length,
                   ElementType type) {
    Op op;
    op.kind = kind;
    op.dst = dst;
    op.src0 = src0;
    op.src1 = src1;
    op.length = length;
    op.type = type;
    return op;
  }
  static Op fmacOp(Dsd dst, Dsd src0, Dsd src1, Dsd scalar, int64_t length,
                   ElementType type) {
    Op op = vector(Kind::fmac, dst, src0, src1, length, type);
    op.scalar = scalar;
    return op;
  }
  /// `op` with its length the element of `buffer` at `cursor`'s value
  /// when the program runs with values, `op.length` otherwise.
  static Op lengthFromData(Op op, int buffer, int cursor) {
    op.lengthFrom = buffer;
    op.lengthCursor = cursor;
    return op;
  }
  static Op activateOp(int task) { return onTask(Kind::activate, task); }
  static Op blockOp(int task) { return onTask(Kind::block, task); }
  static Op unblockOp(int task) { return onTask(Kind::unblock, task); }
  /// A control operation (activate, block, unblock) on task `task`.
  static Op onTask(Kind kind, int task) {
    Op op;
    op.kind = kind;
    op.target = task;
    return op;
  }
  static Op loopOp(int length, int64_t times) {
    Op op;
    op.kind = Kind::loop;
    op.target = length;
    op.by = times;
    return op;
  }
  static Op advanceOp(int cursor, int64_t by = 1) {
    Op op;
    op.kind = Kind::advance;
    op.target = cursor;
    op.by = by;
    return op;
  }
};

/// A DSD offset the program advances: `value` grows by `step` per advance;
/// at `wrap` (when not 0) it returns to 0, advances cursor `carry` (if
/// any) and activates local task `onWrap` (if any).
struct Cursor {
  int64_t step = 1, wrap = 0;
  int carry = -1, onWrap = -1;
};

/// A task: a data task runs once per wavelet of its color that reaches the
/// core (the wavelet in register 0); a local task when activated.
struct Task {
  bool data = false;
  int color = -1;
  std::vector<Op> body;
};

/// Everything one core runs.
struct CoreProgram {
  std::vector<BufferDecl> buffers;
  std::vector<Task> tasks;
  std::vector<Cursor> cursors;
  /// Local tasks active when the program starts.
  std::vector<int> startActive;
  /// Tasks blocked when the program starts.
  std::vector<int> startBlocked;

  int addBuffer(std::string name, int64_t elements, ElementType type) {
    buffers.push_back({std::move(name), elements, type});
    return static_cast<int>(buffers.size()) - 1;
  }
  /// A buffer of f32 constants the program reads.
  int addConstants(std::string name, std::vector<float> values) {
    int buffer = addBuffer(std::move(name), static_cast<int64_t>(values.size()),
                           ElementType::f32);
    buffers[buffer].initial = std::move(values);
    return buffer;
  }
  int addTask(Task task) {
    tasks.push_back(std::move(task));
    return static_cast<int>(tasks.size()) - 1;
  }
  int addCursor(Cursor cursor) {
    cursors.push_back(cursor);
    return static_cast<int>(cursors.size()) - 1;
  }
  int64_t bytes() const {
    int64_t total = 0;
    for (const BufferDecl &buffer : buffers)
      total += buffer.bytes();
    return total;
  }
};

} // namespace cgpt::sim::mesh

#endif // CGPT_SIM_MESH_COREPROGRAM_H
