//===- MeshQueuesTest.cpp - what a mesh queue holds, exactly
//---------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// A router or engine queue holds the target's queue_wavelets and not one
// more: back-pressure (a sender stalls when the queue ahead is full) and
// every time the mesh simulates under contention rest on that count. One
// wavelet arrives a cycle, as one link feeds a queue.
//
//===----------------------------------------------------------------------===//

#include "Sim/Mesh/MeshBand.h"

#include <gtest/gtest.h>

namespace {
using cgpt::sim::mesh::Wavelet;
using cgpt::sim::mesh::detail::Queues;

/// Stages wavelet `value` into queue 0 in a cycle, which joins it at the
/// cycle's end.
void arrive(Queues &queues, float value) {
  queues.stage(0, Wavelet{value, -value});
  queues.settle();
}

TEST(MeshQueues, HoldExactlyTheirDepth) {
  for (int depth : {1, 2, 4, 7}) {
    Queues queues(/*count=*/1, depth, /*carryValues=*/true,
                  /*deferFrees=*/false);
    for (int i = 0; i < depth; ++i) {
      ASSERT_TRUE(queues.hasRoom(0)) << "depth " << depth << ", " << i;
      arrive(queues, static_cast<float>(i));
    }
    EXPECT_FALSE(queues.hasRoom(0)) << "depth " << depth;
    EXPECT_EQ(queues.count(0), depth);
    // First in, first out, values intact; a pop makes room for one.
    Wavelet first = queues.pop(0);
    EXPECT_EQ(first.lo, 0.0f);
    EXPECT_EQ(first.hi, -0.0f);
    EXPECT_TRUE(queues.hasRoom(0));
    arrive(queues, 100.0f);
    EXPECT_FALSE(queues.hasRoom(0));
    for (int i = 1; i < depth; ++i)
      EXPECT_EQ(queues.pop(0).lo, static_cast<float>(i));
    EXPECT_EQ(queues.pop(0).lo, 100.0f);
    EXPECT_EQ(queues.count(0), 0);
  }
}

TEST(MeshQueues, ArrivingAndReservedWaveletsTakeTheirPlaces) {
  Queues queues(1, 3, /*carryValues=*/false, /*deferFrees=*/false);
  queues.stage(0, {}); // arrives this cycle
  queues.reserve(0);   // still crossing a ramp
  EXPECT_TRUE(queues.hasRoom(0));
  queues.stage(0, {});
  EXPECT_FALSE(queues.hasRoom(0)); // 2 arriving + 1 reserved = 3
  queues.settle();
  EXPECT_EQ(queues.count(0), 2);
  EXPECT_FALSE(queues.hasRoom(0));
  queues.stageReserved(0, {});
  queues.settle();
  EXPECT_EQ(queues.count(0), 3);
}

TEST(MeshQueues, AFreedPlaceIsUsableOnlyFromTheNextCycleWhereDeferred) {
  // A queue another band also sees frees its place when that band hears
  // of it: a cycle later, never in the cycle of the pop.
  Queues queues(1, 2, /*carryValues=*/false, /*deferFrees=*/true);
  arrive(queues, 0);
  arrive(queues, 0);
  queues.pop(0);
  EXPECT_FALSE(queues.hasRoom(0));
  queues.settle(); // the cycle ends
  EXPECT_TRUE(queues.hasRoom(0));
}

} // namespace
