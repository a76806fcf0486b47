//===- WaferOps.td - wafer placement dialect ---------------*- tablegen -*-===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#ifndef CGPT_DIALECT_WAFER_IR_WAFEROPS_TD
#define CGPT_DIALECT_WAFER_IR_WAFEROPS_TD

include "cgpt/Dialect/Dataflow/IR/KernelKind.td"
include "cgpt/Dialect/Dataflow/IR/MapKind.td"
include "cgpt/Dialect/Training/IR/TrainingAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "cgpt/Dialect/Wafer/IR/WaferEnums.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"

def Wafer_Dialect : Dialect {
  let name = "wafer";
  let cppNamespace = "::cgpt::wafer";
  let summary = "Kernels laid out over the core mesh as weight streaming runs them";
  let description = [{
    The `wafer` dialect maps a dataflow program onto a target's 2D core
    mesh. A `wafer.device` holds the stages in schedule order (one layer's
    forward or backward pass, the embedding, the loss turn-around); a stage
    holds its kernels as `wafer.region`s, in the order they run. Once
    placed, the IR is the whole program the runtime executes: each region
    records the rectangle of cores it runs on (`at`), how it spreads its
    data and traffic there (`#wafer.layout`), and its `wave`: regions of
    one wave run at the same time on disjoint rectangles, waves one after
    another. The device records how the step runs (`execution`: weight
    streaming, or layer pipelined with each stage's `slot` on the mesh),
    which placer laid it out, the micro-batch, the accumulation and the
    checkpoint policy. `wafer.ingress` and `wafer.egress` are where weights
    enter and gradients leave at the mesh's edge.

    ```mlir
    wafer.device @tiny target "mini" attributes {checkpoint = #wafer.checkpoint<keep>,
        execution = #wafer.execution<weight_streaming>, placer = "whole-mesh", ...} {
      wafer.stage @h.0.forward order 1 "forward" layer 0 attributes {checkpoint_bytes = 16384 : i64} {
        wafer.region @matmul.1 weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12>
            layout <token_groups = 12, feature_groups = 16, weights = north, partials = rows> wave 1 {...}
        wafer.ingress "h.0.attn.qkv.weight" -> @matmul.1 bytes 49152 at [0, 0]
        ...
      }
    }
    ```
  }];
  // Regions run dataflow kernels, named by their op.
  let dependentDialects = ["::cgpt::training::TrainingDialect",
                           "::cgpt::dataflow::DataflowDialect"];
  let useDefaultAttributePrinterParser = 1;
}

class Wafer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Wafer_Dialect, mnemonic, traits>;

def Wafer_RectAttr : AttrDef<Wafer_Dialect, "Rect"> {
  let mnemonic = "rect";
  let summary = "a rectangle of cores: origin (x, y), width and height";
  let description = [{
    ```mlir
    #wafer.rect<x = 0, y = 0, w = 3, h = 12>
    ```
  }];
  let parameters = (ins "int64_t":$x, "int64_t":$y, "int64_t":$w,
                        "int64_t":$h);
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    int64_t getCores() const { return getW() * getH(); }
    /// The rectangle as the plain value the cost model and placers take.
    ::cgpt::wafer::Rect getRect() const {
      return {getX(), getY(), getW(), getH()};
    }
  }];
}

def Wafer_LayoutAttr : AttrDef<Wafer_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "how a kernel spreads its data and traffic over its cores";
  let description = [{
    Tokens are split into `token_groups` (one per run of mesh rows) and
    features into `feature_groups` (one per run of mesh columns): a core
    holds ceil(tokens / token_groups) tokens of ceil(features /
    feature_groups) features. Weights enter at the `weights` edge and are
    multicast along the mesh to every core that uses them; partial sums are
    reduced along `partials`. A layer-pipelined region holds its weights
    (`weights = resident`) and streams its tokens through them instead.
    Attention spreads (sequence, head) blocks instead: `token_groups`
    query blocks down the rows by `feature_groups` key blocks along them,
    its scores never leaving the cores that make them.

    A token group's feature groups are a segment of adjacent cores along
    one row, segments side by side: a `w` x `h` rectangle holds
    floor(w / feature_groups) x h token groups; the region verifier refuses
    a layout they do not hold, and an attention block taller than `h`.

    A weight matmul or weight gradient sums its output columns in f32 on
    each core before they pass along the chain, and a token sum (a bias
    gradient) its features; `sum_block` is how many columns a core sums at
    once (for resident weights: how many tokens; for a token sum: how many
    of its features), so that the sums fit beside everything else the core
    holds. Blocks run one after another, each ending in its own chain.
    Attention takes `sum_block` of a core's queries at once, each block's
    scores and statistics (and, backward, its probabilities and their
    gradients) beside the keys and values. Where a core cannot hold its
    keys and values (or, backward, their f32 gradients), or where that is
    faster, attention takes `key_block` of its keys at a time instead (0:
    all, resident): forward, the keys and values stream past each block of
    queries a block at a time, the flash way; backward, key block by key
    block, the query blocks stream past it and its keys' gradients leave
    down the column before the next, the queries' statistics coming from a
    sweep of their own and their gradients from another.
    `wafer-plan-batch` sets it from the SRAM the region leaves; absent (0),
    the kernel sums all its columns at once.

    ```mlir
    #wafer.layout<token_groups = 745, feature_groups = 1000, weights = north, partials = rows>
    #wafer.layout<token_groups = 9012, feature_groups = 82, weights = north, partials = rows, sum_block = 84>
    #wafer.layout<token_groups = 497, feature_groups = 93, weights = none, partials = rows, sum_block = 11, key_block = 6>
    ```
  }];
  let parameters = (ins "int64_t":$token_groups, "int64_t":$feature_groups,
                        "::cgpt::wafer::Edge":$weights,
                        "::cgpt::wafer::ReduceAxis":$partials,
                        DefaultValuedParameter<"int64_t", "0">:$sum_block,
                        DefaultValuedParameter<"int64_t", "0">:$key_block);
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    /// The layout as the plain value the cost model and placers take.
    ::cgpt::wafer::Layout getLayout() const {
      return {getTokenGroups(), getFeatureGroups(), getWeights(),
              getSumBlock(), getKeyBlock()};
    }
  }];
}

def Wafer_EpilogueMapAttr : AttrDef<Wafer_Dialect, "EpilogueMap"> {
  let mnemonic = "epilogue_map";
  let summary = "a map a weight matmul's cores apply to their part of its outputs";
  let description = [{
    A `dataflow.map` fused into a weight matmul's region that takes the
    running value (the product, or the map before it in the region's
    `epilogue`) as its input number `running`; a binary map's other input
    is an activation the cores hold beside their part of the outputs.
    `kept`: the running value is also read beyond this map, so the map
    writes its result beside it rather than in its place.

    ```mlir
    #wafer.epilogue_map<kind = gelu, running = 0, kept = true>
    #wafer.epilogue_map<kind = add, running = 1, kept = false>
    ```
  }];
  let parameters = (ins "::cgpt::dataflow::MapKind":$kind, "int64_t":$running,
                        "bool":$kept);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Wafer_CheckpointAttr : AttrDef<Wafer_Dialect, "Checkpoint"> {
  let mnemonic = "checkpoint";
  let summary = "where the activations kept for the backward pass live";
  let description = [{
    - `keep`: every layer's checkpoint stays on the wafer;
    - `every` with an `interval` k: the checkpoints of layers 0, k, 2k, ...
      stay on the wafer; before the backward pass of a run of k layers, the
      forward stages of the run are executed again (their weights streamed
      again) to rebuild the other checkpoints;
    - `offload`: each checkpoint leaves the wafer after its forward stage
      and comes back before its backward stage, sharing the system's I/O
      with weights and gradients.

    ```mlir
    #wafer.checkpoint<keep>
    #wafer.checkpoint<every 4>
    #wafer.checkpoint<offload>
    ```
  }];
  let parameters = (ins StringRefParameter<"keep, every or offload">:$policy,
                        "int64_t":$interval);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Wafer_ExecutionModeAttr
    : EnumAttr<Wafer_Dialect, Wafer_ExecutionMode, "execution"> {
  let summary = "how the placed step runs: weight streaming or layer pipelined";
  let description = [{
    ```mlir
    #wafer.execution<weight_streaming>
    #wafer.execution<layer_pipelined>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Wafer_CandidateAttr : AttrDef<Wafer_Dialect, "Candidate"> {
  let mnemonic = "candidate";
  let summary = "one micro-batch and placer the planner weighed, with its best policy";
  let description = [{
    A row of `micro_batch_size: explore`: the micro-batch, the placer, the
    fastest checkpoint policy that fits with them (or the leanest when none
    fits), whether it fits, its SRAM peak per core and, when it fits, the
    samples per second the step's schedule predicts (0 otherwise).

    ```mlir
    #wafer.candidate<micro_batch = 24, placer = "side-by-side", checkpoint = #wafer.checkpoint<keep>, fits = true, sram_peak = 40960, samples_per_second = 91.5>
    ```
  }];
  let parameters = (ins "int64_t":$micro_batch,
                        StringRefParameter<"the placer">:$placer,
                        Wafer_CheckpointAttr:$checkpoint, "bool":$fits,
                        "int64_t":$sram_peak,
                        Training_F64Param:$samples_per_second);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Wafer_DeviceOp : Wafer_Op<"device", [
    IsolatedFromAbove, Symbol, SymbolTable, SingleBlock, NoTerminator]> {
  let summary = "a training step compiled for one target";
  let description = [{
    Binds the program to a target, as it was named (a built-in or a target
    file's path); mesh, SRAM and every rate come from that target through
    `getTargetModel()`, never from copies in the IR. Holds the stages in
    schedule order. The batch facts come from the dataflow program;
    `micro_batch` and `grad_accum_steps` are 0 until `wafer-plan-batch`
    chooses them, with the `checkpoint` policy and the `placer` whose
    layout it weighed, and says why in `plan`; under `micro_batch_size:
    explore` it records every micro-batch and placer it weighed in
    `explored`. `wafer-place` records the `execution` mode of the placer it
    ran. `kept_bytes_per_sequence` is what every sequence keeps for its
    backward pass (the sum of the stages' `checkpoint_bytes`);
    `flops_per_sequence` is the step's algorithmic FLOPs for one sequence
    (recomputation excluded), the numerator of utilization.
    `max_gradient_norm` is the optimizer's clipping threshold (0: no
    clipping): clipped gradients need the norm of all of them before the
    weight servers update any weight.

    ```mlir
    wafer.device @tiny target "mini" attributes {checkpoint = #wafer.checkpoint<keep>,
        execution = #wafer.execution<weight_streaming>, global_batch = 8 : i64,
        grad_accum_steps = 2 : i64, max_gradient_norm = 1.0 : f64,
        micro_batch = 4 : i64, placer = "whole-mesh", ...} {
      wafer.stage @embed.forward order 0 "forward" { ... }
      ...
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$target,
                       CGPT_I64Attr:$global_batch, CGPT_I64Attr:$num_csx,
                       CGPT_I64Attr:$seq_len,
                       Training_MicroBatchAttr:$micro_batch_request,
                       CGPT_I64Attr:$micro_batch,
                       CGPT_I64Attr:$grad_accum_steps,
                       CGPT_I64Attr:$kept_bytes_per_sequence,
                       CGPT_I64Attr:$parameters,
                       CGPT_I64Attr:$flops_per_sequence,
                       DefaultValuedAttr<F64Attr, "0.0">:$max_gradient_norm,
                       OptionalAttr<Wafer_CheckpointAttr>:$checkpoint,
                       OptionalAttr<StrAttr>:$placer,
                       OptionalAttr<Wafer_ExecutionModeAttr>:$execution,
                       OptionalAttr<StrAttr>:$plan,
                       OptionalAttr<TypedArrayAttrBase<Wafer_CandidateAttr,
                           "micro-batches weighed">>:$explored);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `target` $target attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The busiest system's share: the global batch is split as evenly as
    /// it goes, so some systems may get one sequence fewer.
    int64_t getPerSystemBatch() {
      return llvm::divideCeil(getGlobalBatch(), getNumCsx());
    }
    double getAlgorithmicFlopsPerStep() {
      return static_cast<double>(getFlopsPerSequence()) * getGlobalBatch();
    }
    /// The target this device was compiled for (loaded once per process
    /// and name); fails with a diagnostic when it cannot be read, the first
    /// time it is asked for.
    mlir::FailureOr<const ::cgpt::target::WaferTargetModel *> getTargetModel();
    /// Checks the stages' slots and the regions' weights against the
    /// execution mode.
    mlir::LogicalResult verifyExecution();
  }];
}

def Wafer_StageOp : Wafer_Op<"stage", [
    Symbol, SymbolTable, SingleBlock, NoTerminator, HasParent<"DeviceOp">]> {
  let summary = "one layer's pass, the embedding or the loss turn-around";
  let description = [{
    One dataflow stage, `order`-th in the schedule: one layer's forward or
    backward pass, the embedding, or the loss turn-around. Its regions run
    wave by wave (`wafer.region`'s `wave`). `checkpoint_bytes` is what one
    sequence keeps from this stage for its backward pass (the layer's
    input, under recompute=layer).

    Under weight streaming the stages run one after another, each over the
    mesh. Under layer-pipelined execution each stage has a `slot`: stages of
    one slot (a layer's forward and backward) share a rectangle that holds
    their weights, and the slots work at the same time, micro-batches
    flowing from one to the next.

    ```mlir
    wafer.stage @h.0.forward order 1 "forward" layer 0 attributes {checkpoint_bytes = 16384 : i64} { ... }
    wafer.stage @h.0.backward order 6 "backward" layer 0 slot 1 { ... }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, CGPT_I64Attr:$order,
                       StrAttr:$phase, OptionalAttr<CGPT_I64Attr>:$layer,
                       OptionalAttr<CGPT_I64Attr>:$slot,
                       DefaultValuedAttr<CGPT_I64Attr, "0">:$checkpoint_bytes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `order` $order $phase (`layer` $layer^)? (`slot` $slot^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Checks that regions run wave by wave in order, a wave's regions on
    /// cores of their own, none reading another of its wave.
    mlir::LogicalResult verifyWaves();
  }];
}

def Wafer_RegionOp : Wafer_Op<"region", [Symbol, HasParent<"StageOp">]> {
  let summary = "one kernel of a stage, on its rectangle of cores";
  let description = [{
    A kernel of the stage, `kind` saying how it runs, and the dataflow
    kernels it executes: `kernel` first, then those `fused` into it
    (elementwise work that consumes its result, or the softmax between
    attention's products). All sizes are per sequence of the micro-batch:
    `flops` executed; `shape` [rows, columns, contracted] (rows are tokens,
    or heads x tokens for attention); `element_bytes` of its stored
    operands; `live`, the bytes of activations live while it runs (the
    inputs and results of all its kernels at once, since fused kernels run
    together, and what later kernels of the stage still need);
    `operand_bytes`, those of the activations it reads and writes itself
    (what a region on part of the mesh gathers onto its own cores); and, once
    per pass whatever the micro-batch, the `accumulator` bytes of the
    weight gradient it sums. A kernel against a streamed weight has
    `weight_bytes`. The loss turn-around runs over the vocabulary in
    `chunks` (its logits never exist whole, only one chunk's worth is
    live), and the logits product `repeats` twice: once to find each
    token's log-sum-exp, once to form the gradient. A routed-expert kernel
    runs one pass for each of its `experts`, its shape counting every
    routed row of a sequence, each pass laid out for `expert_rows` rows of
    the micro-batch: the load `wafer-plan-batch` plans for the most loaded
    expert (docs/wafer.md, "Mixture of experts"). The router's region
    (`dataflow.route`) chooses `top_k` of its `columns` experts a token
    once its product is summed, with a null expert's fixed logit
    `null_expert` in the weights' normalization, and its logits rounded to
    the stored element first unless `router_f32`; the chain's last core of
    each segment runs the choice (docs/runtime.md, "The router on the
    mesh"). `reads` names the regions of the same stage whose results it
    reads; a region may not run before them.

    A weight matmul's `epilogue` is what its cores do to their part of its
    outputs once its sums are reduce-scattered (docs/runtime.md, "The
    weight matmul's epilogue"): add the `bias` (a `dataflow.matmul`'s own,
    or for a `dataflow.expert_matmul` each expert's, which streams with its
    weights as one more row) and `scale` the sums (a `dataflow.matmul`'s
    alone), then apply the first kernels fused into it,
    in order, where they are maps that each take the running value and
    hold any other input from outside the region. A fused kernel after
    them is the executor's.

    `wafer-place` sets `at` (the rectangle of cores it runs on), its
    `layout` and its `wave` (regions of one wave run at the same time on
    disjoint rectangles); `wafer-route` gives its streams `colors`;
    `wafer-check-memory` records the per-core peak in `sram_bytes`. The
    runtime times and sizes the region from these, and from nothing else.

    ```mlir
    wafer.region @matmul.5 weight_matmul "dataflow.matmul" at <x = 0, y = 0, w = 16, h = 12>
        layout <token_groups = 12, feature_groups = 16, weights = north, partials = rows> wave 4
        {bias, epilogue = [#wafer.epilogue_map<kind = gelu, running = 0, kept = true>],
         fused = ["dataflow.map"], ...}
    wafer.region @matmul.8 weight_grad "dataflow.matmul" at <x = 0, y = 0, w = 8, h = 12>
        layout <token_groups = 12, feature_groups = 8, weights = none, partials = columns> wave 7
        {accumulator = 16384 : i64, colors = array<i64: 0, 1, 2, 3>, element_bytes = 2 : i64,
         flops = 1572864 : i64, live = 81920 : i64, reads = [@map.6],
         shape = array<i64: 64, 64, 64>, sram_bytes = 30720 : i64}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Dataflow_KernelKind:$kind,
                       StrAttr:$kernel,
                       DefaultValuedAttr<StrArrayAttr, "{}">:$fused,
                       OptionalAttr<Dataflow_MapKindAttr>:$map,
                       OptionalAttr<Wafer_RectAttr>:$placement,
                       OptionalAttr<Wafer_LayoutAttr>:$layout,
                       OptionalAttr<CGPT_I64Attr>:$wave,
                       CGPT_I64Attr:$flops, DenseI64ArrayAttr:$shape,
                       CGPT_I64Attr:$element_bytes, CGPT_I64Attr:$live,
                       DefaultValuedAttr<CGPT_I64Attr, "0">:$operand_bytes,
                       CGPT_I64Attr:$accumulator,
                       OptionalAttr<CGPT_I64Attr>:$weight_bytes,
                       DefaultValuedAttr<CGPT_I64Attr, "1">:$chunks,
                       DefaultValuedAttr<CGPT_I64Attr, "1">:$repeats,
                       DefaultValuedAttr<CGPT_I64Attr, "0">:$experts,
                       OptionalAttr<CGPT_I64Attr>:$expert_rows,
                       OptionalAttr<CGPT_I64Attr>:$top_k,
                       OptionalAttr<F64Attr>:$null_expert,
                       UnitAttr:$router_f32,
                       UnitAttr:$bias, OptionalAttr<F64Attr>:$scale,
                       DefaultValuedAttr<TypedArrayAttrBase<Wafer_EpilogueMapAttr,
                           "maps a weight matmul's cores apply">, "{}">:$epilogue,
                       OptionalAttr<FlatSymbolRefArrayAttr>:$reads,
                       OptionalAttr<DenseI64ArrayAttr>:$colors,
                       OptionalAttr<CGPT_I64Attr>:$sram_bytes);
  let assemblyFormat = [{
    $sym_name $kind $kernel (`map` `` $map^)? (`at` $placement^)?
    (`layout` $layout^)?
    (`wave` $wave^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Checks the bias, scale and epilogue: a weight matmul's alone, its
    /// maps the first kernels it fuses, each taking the running value as
    /// one of its inputs.
    mlir::LogicalResult verifyEpilogue();
    int64_t getRows() { return getShape()[0]; }
    int64_t getColumns() { return getShape()[1]; }
    int64_t getContracted() { return getShape()[2]; }
  }];
}

def Wafer_IngressOp : Wafer_Op<"ingress", [HasParent<"StageOp">]> {
  let summary = "where a weight stream enters the mesh";
  let description = [{
    The named weight enters at the mesh's north edge above its region's
    rectangle (`at`, set by `wafer-route`), `bytes` per pass, and is
    multicast to the cores that use it.

    ```mlir
    wafer.ingress "h.0.attn.qkv.weight" -> @matmul.1 bytes 49152 at [0, 0]
    ```
  }];
  let arguments = (ins StrAttr:$weight, FlatSymbolRefAttr:$dest,
                       CGPT_I64Attr:$bytes,
                       OptionalAttr<DenseI64ArrayAttr>:$at);
  let assemblyFormat = "$weight `->` $dest `bytes` $bytes (`at` $at^)? attr-dict";
  let hasVerifier = 1;
}

def Wafer_EgressOp : Wafer_Op<"egress", [HasParent<"StageOp">]> {
  let summary = "where a weight gradient leaves the mesh";
  let description = [{
    The gradient a region summed leaves at the south-east corner of the
    rows of its rectangle that its token groups occupy, where its reduction
    along columns ends, `bytes` per pass.

    ```mlir
    wafer.egress @matmul.9 -> "h.0.attn.qkv.weight" bytes 49152 at [15, 11]
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$source, StrAttr:$weight,
                       CGPT_I64Attr:$bytes,
                       OptionalAttr<DenseI64ArrayAttr>:$at);
  let assemblyFormat = "$source `->` $weight `bytes` $bytes (`at` $at^)? attr-dict";
  let hasVerifier = 1;
}

#endif // CGPT_DIALECT_WAFER_IR_WAFEROPS_TD
