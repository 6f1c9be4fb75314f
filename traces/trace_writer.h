// Writes a trace file (traces/trace.capnp, traces/framing.h). Append-only: each block is encoded,
// compressed and written with one write() straight to the file, so a crash at any moment leaves a
// readable prefix (docs/architecture.md: self-contained traces). Not thread-safe: one writer thread owns it.
//
//   auto writer = TraceWriter::create("run.sbt", header, error);   // writes run.sbt.partial
//   writer->writeChunk(chunk); ...                                  // then gaps, program changes,
//   writer->writeFault(fault);                                      // at most one fault, last
//   writer->close();                                                // index + trailer, rename
//
// Blocks are compressed and framed by a BlockEncoder (traces/block_encoder.h); a chunk encoded
// earlier by one (a flight recorder's history) is appended as it is with writeEncodedChunk, a
// chunk's block framed in another process (a runtime's control stream) with writeFramedChunk.
//
// A trace may also be written in place, with no .partial beside it: created exclusively from a
// header block framed elsewhere (createExclusive: an attached debug session's local copy of a
// runtime's history), or an existing trace opened to append to (openToAppend). Either way the
// blocks appended are checked as the format requires and numbered on from the file's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "traces/block_encoder.h"
#include "traces/trace_codec.h"
#include "traces/trace_model.h"

namespace scanback::trace {

class TraceWriter {
 public:
  // Creates `path + ".partial"` and writes the file magic and the header block. Refuses (null, with
  // the reason in `error`) when `path` or its .partial exists and is not a scanback trace: a
  // recording replaces an older trace, never any other file. The .partial stays locked (flock)
  // until close(), so that another writer — a second recording to the same path, a snapshot to it
  // or to the .partial itself — is refused rather than destroying its cycles. `error` does not
  // repeat `path`: the caller names the trace.
  [[nodiscard]] static std::unique_ptr<TraceWriter> create(const std::string& path, const HeaderData& header,
                                                           std::string& error);
  // Creates the trace `path` itself, exclusively: refused when anything is at `path` (a file, a link:
  // nothing that was there is ever written to), readable by its owner only. Its header block is
  // `headerBlock`, framed elsewhere (a runtime's control stream: frame, payload hash and header
  // are checked, and it becomes block 0). Written in place and locked (flock) like a .partial;
  // close() adds the index and the trailer and renames nothing.
  [[nodiscard]] static std::unique_ptr<TraceWriter> createExclusive(const std::string& path,
                                                                    std::span<const uint8_t> headerBlock,
                                                                    std::string& error);
  // Opens the trace at `path` — a .partial left by a recording, a file createExclusive wrote, a
  // closed trace (its index and trailer are cut off, and written anew by close()) — to append to
  // it in place. Every block is checked (frame, payload hash, sequence number, cycle order): a file
  // cut off inside a block or damaged is refused, with the offset, rather than appended to after
  // bytes a reader would stop at. Cycles, sequence numbers and the program in effect go on from the
  // file's; a continuation may follow its last block only through writeFramedChunk (the paths of a
  // chunk written earlier are not read back). Refused while another writer holds the file.
  [[nodiscard]] static std::unique_ptr<TraceWriter> openToAppend(const std::string& path, std::string& error);
  // Without close() the `.partial` file stays behind as it is: a readable trace without an index.
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Each returns false with lastError() set. A block that fails validation (validateChunk against
  // the program in effect, cycles going backwards or leaving a hole — dropped cycles are a gap —,
  // anything after a fault) is not written and the
  // writer stays usable; an I/O error truncates the file back to the last complete block and
  // leaves the writer failed (every later call returns false).
  // A chunk, or with chunk.continuation a continuation of the chunk written last (right before it,
  // nothing in between, its paths numbered on from that chunk's).
  [[nodiscard]] bool writeChunk(const ChunkData& chunk);
  // The same for a chunk encoded earlier, with the same checks: cycle order and no chunk after
  // the fault here; validity through `chunk.limits()`, which must be the limits of the program
  // in effect here (the chunk was validated against them when it was encoded). The frame header
  // and payload hash are checked too, so a corrupted buffer is refused rather than written.
  [[nodiscard]] bool writeEncodedChunk(const EncodedChunk& chunk);
  // A chunk's block framed elsewhere (a runtime's control stream): its first block or a
  // continuation of the chunk whose block was written last. Its frame (magic, header check, kind,
  // size) and payload hash are checked, and its cycles must follow on, as above; its payload is
  // not decompressed (a reader checks it). Renumbered to follow the blocks before it.
  [[nodiscard]] bool writeFramedChunk(std::span<const uint8_t> block);
  [[nodiscard]] bool writeGap(const GapData& gap);
  [[nodiscard]] bool writeProgramChange(const ProgramChangeData& change);
  [[nodiscard]] bool writeFault(const FaultData& fault);
  // The cycle under way when the recording finished (a task paused by a debugger): the last block.
  [[nodiscard]] bool writeOpenCycle(const OpenCycleData& open);
  // Makes the blocks written so far durable (fdatasync). Readers see every block as soon as its
  // write returns, flush or not.
  [[nodiscard]] bool flush();
  // Writes the index block and the trailer, fsyncs, closes and renames `*.partial` to the final
  // path. After close() (successful or not) nothing more can be written.
  [[nodiscard]] bool close();
  // After an I/O error (a full disk, a file size limit): the file was cut back to its last complete
  // block, so writing may go on from there. True when it may (the cycles of the block that failed
  // are lost: the caller writes a gap for them), and when it had not failed. False when the writer
  // is closed, or could not cut the file back.
  [[nodiscard]] bool recover();
  // Syncs this writer's .partial and renames it to `path + ".partial"`, replacing the file there,
  // which from then on is this writer's (its final path is `path`). A flight recorder's file is
  // rewritten this way, so that a crash at any moment leaves the old file or the new one.
  [[nodiscard]] bool replacePartial(const std::string& path);

  const std::string& path() const { return path_; }  // the final path
  // The file being written: `path + ".partial"`, or the path itself when written in place.
  std::string partialPath() const { return inPlace_ ? path_ : path_ + ".partial"; }
  uint64_t bytesWritten() const { return bytesWritten_; }  // file size so far
  uint64_t rawBytes() const { return rawBytes_; }          // uncompressed payload bytes so far
  // The first cycle a following chunk or gap may start at (end of the last chunk or gap).
  uint64_t nextCycle() const { return nextCycle_; }
  const std::vector<BlockInfo>& blocks() const { return blocks_; }  // written after the header
  bool closed() const { return fd_ < 0; }
  bool failed() const { return failed_; }
  const std::string& lastError() const { return error_; }

 private:
  TraceWriter(std::string path, int fd, const HeaderData& header);
  // Reads the blocks of the file open at fd_ (openToAppend), up to its end.
  [[nodiscard]] bool takeUp(uint64_t fileSize, std::string& error);
  // After a chunk's block, whatever wrote it.
  void wroteChunkBlock(BlockInfo info, uint64_t firstCycle, uint64_t cycleCount);
  [[nodiscard]] bool writeBlock(BlockKind kind, uint64_t firstCycle, uint64_t cycleCount,
                                const std::vector<uint8_t>& message, BlockInfo* info,
                                std::span<const uint8_t> prefix = {});
  // Appends one framed block (frame header + payload).
  [[nodiscard]] bool appendBlock(std::span<const uint8_t> block, BlockKind kind, uint64_t firstCycle,
                                 uint64_t cycleCount, uint32_t rawSize, BlockInfo* info);
  bool usable();
  bool fail(std::string message);  // always false: `return fail(...)`
  // A chunk, gap or open cycle must start where the previous chunk or gap ended (the first one
  // anywhere).
  [[nodiscard]] bool startsAtNextCycle(const char* what, uint64_t firstCycle);
  // A continuation must follow the chunk written last, with its paths numbered on from there.
  [[nodiscard]] bool continues(const char* what, uint64_t firstCycle, uint32_t pathBase);
  // The same without the paths (a framed block's are not decoded): its chunk's block is the last.
  [[nodiscard]] bool continues(const char* what, uint64_t firstCycle);

  std::string path_;
  int fd_ = -1;
  bool inPlace_ = false;  // written at path_ itself (createExclusive, openToAppend): no rename
  BlockEncoder encoder_;
  ChunkLimits limits_;
  uint64_t nextCycle_ = 0;
  bool wroteCycles_ = false;       // a chunk or gap was written: the next one must follow on
  bool numbered_ = true;           // the blocks' frames carry sequence numbers (format version 2)
  uint32_t nextSequence_ = 0;      // the header block is 0
  const char* endedBy_ = nullptr;  // the block that ended the trace (a fault, an open cycle)
  bool failed_ = false;
  bool recoverable_ = false;  // the failed block was cut off again: writing may go on
  // The paths of the chunk a continuation may follow (the one written last); none after a gap,
  // program change or lost block.
  std::optional<uint32_t> chunkPaths_;
  bool chunkOpen_ = false;             // the last block is a chunk's: a continuation may follow it
  std::vector<uint8_t> chunkMessage_;  // the message of the chunk's block written last (writeChunk)
  uint64_t bytesWritten_ = 0;
  uint64_t rawBytes_ = 0;
  std::vector<BlockInfo> blocks_;
  std::string error_;
};

}  // namespace scanback::trace
