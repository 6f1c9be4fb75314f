@0xfd6bdd0f83be2c77;
# The scanback trace format. A trace is one file:
#
#   FileMagic "SCANBACK" (8 bytes)
#   Block*                    -- framed, independently checked and zstd-compressed (traces/framing.h)
#   Trailer (32 bytes)        -- points at the Index block; optional (absent after a crash)
#
# The first block is always a Header. Every other block is a Chunk (with its continuations),
# Gap, ProgramChange, Fault, OpenCycle or Index. Blocks are self-delimiting, so the index can always be rebuilt by scanning; a file cut
# off at any byte yields every block before the cut.
#
# Invariants (docs/architecture.md: determinism, one flat image, self-contained traces, replay checks itself):
# - A chunk starts with a keyframe: the full state image at the cycle boundary before its first
#   cycle. Replaying chunk k needs only the program (from the header) and chunk k. A chunk may be
#   stored as one Chunk block followed directly by Continuation blocks (format version 3), so that
#   a recorder puts its cycles on disk as they end without a keyframe each time.
# - Cycles are numbered from 0 across all tasks in execution order. Within a trace, cycle numbers
#   increase; a Gap block marks cycles that were not recorded. The chunk after a gap starts with
#   its own keyframe.
# - Each recorded cycle carries a digest: its statement count and a 32-bit hash of the image at
#   the end of the cycle (the low bits of XXH3-64).
# - Fields are only ever added (never renumbered or removed); readers check minReaderVersion.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("scanback::schema");

struct SourceFile {
  path @0 :Text;
  text @1 :Text;
}

struct Task {
  name @0 :Text;
  intervalNs @1 :Int64;
  priority @2 :Int32;
}

struct RecordingOptions {
  keyframeEvery @0 :UInt32;     # cycles per chunk
  zstdLevel @1 :Int32;
  statements @2 :Bool;          # statement paths are recorded
  ringBytes @3 :UInt64;         # flight-recorder mode: keep at most this much (0: off)
  ringDurationNs @4 :Int64;     # flight-recorder mode: keep at most this much virtual time (0: off)
  statementBudget @5 :UInt64;   # the watchdog's statements per cycle (0: the VM's default); replay
                                # needs it to reproduce a watchdog fault
  test @6 :Text;                # the unit test the program was compiled to run (scanback test
                                # --record-failures: CompileOptions::test); empty: the project's tasks.
                                # A reader that does not know it compiles another program and says so
}

struct Header {
  formatVersion @0 :UInt32;
  minReaderVersion @1 :UInt32;  # a reader older than this must refuse the trace
  scanbackVersion @2 :Text;
  programHash @3 :Text;         # identity of the program version the trace starts with
  sources @4 :List(SourceFile); # the complete program: a trace replays without the project
  tasks @5 :List(Task);
  options @6 :RecordingOptions;
  startWallTimeNs @7 :Int64;    # informational only; replay never reads it
  imageSize @8 :UInt32;         # bytes of the state image
  statementCount @9 :UInt32;    # statements of the program (ids are 0 .. statementCount-1)
  writeIndexComplete @10 :Bool; # every chunk's write index (Chunk.writeIndex) holds every byte a
                                # statement or a scan input of the chunk wrote, also one changed
                                # and restored within a cycle. False (traces recorded before it,
                                # whose index holds only the bytes that differed at cycle
                                # boundaries): readers must not skip chunks by their index
  ioConfig @11 :Text;           # the I/O configuration the run exchanged %I and %Q with (scanback
                                # run --io: the TOML file's text, docs/fieldbus.md); empty: none.
                                # Informational: what the devices delivered is recorded as scan
                                # inputs, so replay never reads it (older readers ignore it)
  ioConfigPath @12 :Text;       # the file it was read from, as given
}

# Bytes of the image changed from outside: at the start of a cycle (with its scan inputs), or at a
# statement boundary inside it (a debugger's write while the task was paused there).
struct ImageWrite {
  cycleIndex @0 :UInt32;  # within the chunk
  offset @1 :UInt32;      # image offset
  bit @2 :Int8 = -1;      # >= 0: only this bit of bytes[0] is written
  bytes @3 :Data;
  atStep @4 :Int64 = -1;  # >= 0: applied at this statement boundary of the cycle, before the
                          # statement there runs; -1: at the cycle start. Writes of one cycle are
                          # in the order they were made (so in step order). Readers that do not
                          # know it would apply the write at the cycle start: the format version is
                          # not raised, but such a trace then reports a divergence there.
  author @5 :WriteAuthor;  # who made it, so that an explanation names it (docs/explain.md): never
                           # read by replay, which applies every write alike. unknown (the default)
                           # in traces written before it, which read as before; older readers
                           # ignore it, so the format version is not raised. A value this reader
                           # does not know (a newer writer's) reads as unknown.
}

# Who made an ImageWrite (vm/runtime/write_author.h). Only ever added to.
enum WriteAuthor {
  unknown @0;     # not recorded (older traces); or a %I change a device's latch made
  stimulus @1;    # a stimulus file's row (run --inputs, a debug session's inputs)
  debugger @2;    # a debugger's setVariable or setExpression (between cycles, or at atStep)
  force @3;       # scanback rerun: a force of the recording it reruns, written at each cycle start
  modbusPeer @4;  # a %I change: a Modbus TCP client of run --io-serve wrote these bytes
}

# A force set or released (issue 31; vm/runtime/forces.h). From the start of cycle `cycleIndex` of
# the chunk on, every cycle start writes `bytes` (or the bit) at `offset`, after the input changes
# and the writes, until a release of the same storage (offset, bit). A release leaves the value in
# place. A chunk's first block restates, at cycleIndex 0, every force held before its first cycle
# (`restated`), so that the chunk replays on its own. Readers that do not know it replay the forced
# cycles without it and report a divergence at the first cycle a force changed (the format version is
# not raised: a trace without forces is the same as before).
struct Force {
  cycleIndex @0 :UInt32;  # within the chunk (block)
  offset @1 :UInt32;      # image offset
  bit @2 :Int8 = -1;      # >= 0: only this bit of bytes[0] is written
  bytes @3 :Data;         # the forced value; empty for a release
  release @4 :Bool;
  target @5 :Text;        # what the user forced: "Main.fb.x", "%IX0.2"
  sinceCycle @6 :UInt64;  # the cycle whose start first applied the force
  restated @7 :Bool;      # held from before the chunk (not set at this cycle)
}

# A distinct sequence of statement ids executed by one cycle (the cycle's path).
struct Path {
  statements @0 :List(UInt32);
}

struct Chunk {
  firstCycle @0 :UInt64;
  cycleCount @1 :UInt32;
  keyframe @2 :Data;                # the image before firstCycle (imageSize bytes of the program
                                    # in effect: the header's or the last ProgramChange's)
  # Columns: element i describes cycle firstCycle + i.
  tasks @3 :List(UInt16);
  startTimes @4 :List(Int64);       # virtual start time of the cycle, ns
  stepCounts @5 :List(UInt32);      # statement boundaries passed (digest)
  imageHashes @6 :List(UInt32);     # hash of the image at the end of the cycle (digest)
  paths @7 :List(UInt32);           # index into pathTable; 0xFFFFFFFF: not recorded.
                                    # Empty: statement paths were not recorded in this chunk.
  pathTable @8 :List(Path);         # distinct paths of this chunk; statement ids < statementCount
  # Scan inputs, sorted by cycleIndex; offset + size(bytes) <= imageSize. Input changes are the %I bytes latched at cycle start
  # that differ from the image; writes are external writes (stimulus, debugger, HMI).
  inputChanges @9 :List(ImageWrite);
  writes @10 :List(ImageWrite);
  # The write index (added in format 2 without a version bump: older readers ignore it): the bytes
  # of the image this chunk may have written, as sorted, disjoint (offset, size) pairs, flattened.
  # When the header says writeIndexComplete: every byte a statement that ran in the chunk may
  # write (the program's write sets, vm/bytecode/write_sets.h), every byte of its scan inputs, and
  # every byte that differed at one of its cycle boundaries; before that: only the last (a value
  # changed and restored within a cycle is missing). A superset is allowed (nearby ranges are
  # merged). Searches skip chunks whose index misses the bytes they watch, only when the header
  # says it is complete. Absent (hasWriteIndex false): not recorded, every chunk must be searched.
  writeIndex @11 :List(UInt32);
  hasWriteIndex @12 :Bool;
  # A continuation (Block.continuation, format version 3) holds more cycles of the chunk before it:
  # no keyframe, firstCycle where that chunk's cycles end, cycleIndex of its scan inputs counted
  # from its own firstCycle, and pathTable the paths it adds to the chunk's, numbered from pathBase
  # on (paths index the chunk's whole table). Its writeIndex covers its own cycles.
  pathBase @13 :UInt32;
  # Forces set and released in these cycles, sorted by cycleIndex (a chunk's first block begins with
  # the forces held before its first cycle, restated at cycleIndex 0).
  forces @14 :List(Force);
}

# Cycles that were not recorded (the writer fell behind and the scan thread never waits).
struct Gap {
  firstCycle @0 :UInt64;
  cycleCount @1 :UInt64;
}

# From cycle atCycle on, the program is this one (hot reload). Every chunk after this block in
# the file (until the next ProgramChange) belongs to this program: its keyframe has imageSize
# bytes and its statement ids are < statementCount. The task table stays the header's.
struct ProgramChange {
  atCycle @0 :UInt64;
  programHash @1 :Text;
  sources @2 :List(SourceFile);
  imageSize @3 :UInt32;
  statementCount @4 :UInt32;
}

# The program faulted in cycle `cycle` (the last cycle of the preceding chunk); ends the trace.
struct Fault {
  cycle @0 :UInt64;
  step @1 :UInt64;        # statement boundaries passed in that cycle, the faulting one included
  statement @2 :UInt32;
  code @3 :UInt32;        # FaultCode
  message @4 :Text;       # "file:line:col: fault: ..." as the runtime printed it
}

# A cycle the task began and did not end: the recording finished while a debugger held the task
# paused inside it (after `untilStep` statement boundaries, before the statement there ran). It
# replays from its keyframe (the image before it) and scan inputs up to that position, which is
# the end of the trace; there is no digest to check. At most one, the last block before the
# index, with cycle = the cycle after the last chunk's. Readers that do not know it stop before it.
struct OpenCycle {
  cycle @0 :UInt64;
  task @1 :UInt16;
  startNs @2 :Int64;
  untilStep @3 :UInt64;
  keyframe @4 :Data;
  inputChanges @5 :List(ImageWrite);  # cycleIndex 0
  writes @6 :List(ImageWrite);        # cycleIndex 0
  forces @7 :List(Force);             # cycleIndex 0: every force held in the cycle
}

# One block of the trace, as its frame header describes it. The Index lists every block between
# the Header and the Index itself, in file order; the blocks are contiguous, so a reader checks
# offset[i] + 48 + storedSize[i] == offset[i+1] and falls back to a scan when that fails.
struct IndexEntry {
  offset @0 :UInt64;      # file offset of the block's frame header
  kind @1 :UInt8;         # BlockKind (traces/trace_model.h)
  firstCycle @2 :UInt64;
  cycleCount @3 :UInt64;
  storedSize @4 :UInt32;  # payload bytes on disk (after the 48-byte frame header)
  rawSize @5 :UInt32;     # payload bytes after decompression
  # A copy of a chunk's write index (Chunk.writeIndex), so that searches read it without
  # decompressing the chunk. Absent for other blocks and for chunks recorded without one.
  writeIndex @6 :List(UInt32);
  hasWriteIndex @7 :Bool;
}

# Written by a writer that closes cleanly, last before the trailer. Optional: a reader without a
# valid trailer + index scans the blocks instead and finds the same list.
struct Index {
  entries @0 :List(IndexEntry);
}

# The message inside every block. Its union member matches the frame header's kind; the frame
# header repeats firstCycle/cycleCount (chunks, gaps; atCycle for ProgramChange, cycle for Fault)
# so that a scan can build the index without decompressing.
struct Block {
  union {
    header @0 :Header;
    chunk @1 :Chunk;
    gap @2 :Gap;
    programChange @3 :ProgramChange;
    fault @4 :Fault;
    index @5 :Index;
    openCycle @6 :OpenCycle;
    continuation @7 :Chunk;  # format version 3: more cycles of the chunk before it
  }
}
