//===- ProgramReader.cpp - Reading program.json and program.bin -----------===//
//
// This file implements readProgramFiles, the reader of the format that
// ProgramIO.cpp documents and writes. It checks everything it uses: types of
// fields, value ids in [0, num_values), dtypes, shapes, byte counts against
// the dtype and shape, ranges against program.bin's size, and the nesting
// depth of regions. Errors name the file and the entry ("DIR/program.json:
// nodes[3] ('/add'): attribute 'axis': ..."); nlohmann exceptions are caught
// and reported, so a corrupt file never crashes the reader.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/ProgramIO.h"
#include "kiln/runtime/SizeLimits.h"

#include "ProgramFormat.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace kiln {

using namespace programio;

namespace {

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// program.bin, loaded once into an aligned CPU buffer on first use.
class BinReader {
public:
  explicit BinReader(std::string path) : path_(std::move(path)) {}

  /// Reads a TENSOR record (`j` may be null for an absent tensor when
  /// `allowNull`).
  Expected<Tensor> tensor(const Json &j, bool allowNull);

private:
  Status load();

  std::string path_;
  bool loaded_ = false;
  std::shared_ptr<Storage> storage_;
  uint64_t size_ = 0;
};

Expected<int64_t> getInt64(const Json &j, const std::string &what) {
  if (!j.is_number_integer())
    return Status::error(strCat(what, " must be an integer, got ", j.dump()));
  if (j.is_number_unsigned() &&
      j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return Status::error(strCat(what, " ", j.dump(), " is too large"));
  return j.get<int64_t>();
}

const Json *findKey(const Json &j, const char *key) {
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

Expected<const Json *> requireKey(const Json &j, const char *key) {
  const Json *v = findKey(j, key);
  if (!v)
    return Status::error(strCat("missing '", key, "'"));
  return v;
}

Expected<std::string> getString(const Json &j, const char *key,
                                bool optional = false) {
  const Json *v = findKey(j, key);
  if (!v) {
    if (optional)
      return std::string();
    return Status::error(strCat("missing '", key, "'"));
  }
  if (!v->is_string())
    return Status::error(strCat("'", key, "' must be a string"));
  return v->get<std::string>();
}

Expected<DType> getDType(const Json &j, const std::string &what) {
  if (!j.is_string())
    return Status::error(
        strCat(what, " must be a dtype name such as \"f32\", got ", j.dump()));
  std::optional<DType> t = parseDType(j.get<std::string>());
  if (!t)
    return Status::error(strCat("unknown dtype '", j.get<std::string>(),
                                "' (expected f32, f16, bf16, f64, i64, i32, "
                                "i8, u8 or bool)"));
  return *t;
}

/// A shape; `allowDynamic` admits -1 (signatures).
Expected<Shape> getShape(const Json &j, bool allowDynamic) {
  if (!j.is_array())
    return Status::error("'shape' must be an array of sizes");
  Shape shape;
  for (const Json &d : j) {
    Expected<int64_t> v = getInt64(d, "a dimension of 'shape'");
    if (!v)
      return v.status();
    if (*v < (allowDynamic ? -1 : 0))
      return Status::error(strCat("'shape' ", j.dump(), " has dimension ", *v));
    shape.push_back(*v);
  }
  if (!isShapeWithinLimits(shape))
    return Status::error(strCat("'shape' ", j.dump(),
                                " is larger than the limit of 2^40 elements "
                                "(docs/reliability.md)"));
  return shape;
}

Status BinReader::load() {
  if (loaded_)
    return Status::ok();
  std::ifstream in(path_, std::ios::binary | std::ios::ate);
  if (!in)
    return Status::error(strCat(path_,
                                ": cannot open the program's tensor data "
                                "(program.json refers to it)"));
  std::streamoff end = in.tellg();
  if (end < 0)
    return Status::error(strCat(path_, ": cannot read its size"));
  size_ = static_cast<uint64_t>(end);
  storage_ = Storage::allocateCpu(size_);
  if (!storage_->data())
    return Status::error(
        strCat(path_, ": out of memory reading ", size_, " bytes"));
  in.seekg(0);
  if (size_ && !in.read(static_cast<char *>(storage_->data()),
                        static_cast<std::streamsize>(size_)))
    return Status::error(strCat(path_, ": reading ", size_, " bytes failed"));
  loaded_ = true;
  return Status::ok();
}

Expected<Tensor> BinReader::tensor(const Json &j, bool allowNull) {
  if (j.is_null() && allowNull)
    return Tensor();
  if (!j.is_object())
    return Status::error(strCat("a tensor must be an object with dtype, "
                                "shape, offset and bytes, got ",
                                j.dump()));
  Expected<const Json *> dtypeJ = requireKey(j, "dtype");
  if (!dtypeJ)
    return dtypeJ.status();
  Expected<DType> dtype = getDType(**dtypeJ, "'dtype'");
  if (!dtype)
    return dtype.status();
  Expected<const Json *> shapeJ = requireKey(j, "shape");
  if (!shapeJ)
    return shapeJ.status();
  Expected<Shape> shape = getShape(**shapeJ, false);
  if (!shape)
    return shape.status();
  Expected<const Json *> offsetJ = requireKey(j, "offset");
  if (!offsetJ)
    return offsetJ.status();
  Expected<int64_t> offset = getInt64(**offsetJ, "'offset'");
  if (!offset)
    return offset.status();
  Expected<const Json *> bytesJ = requireKey(j, "bytes");
  if (!bytesJ)
    return bytesJ.status();
  Expected<int64_t> bytes = getInt64(**bytesJ, "'bytes'");
  if (!bytes)
    return bytes.status();
  if (*offset < 0 || *bytes < 0)
    return Status::error(strCat("'offset' ", *offset, " and 'bytes' ", *bytes,
                                " must not be negative"));
  // getShape bounded the element count: the product cannot overflow.
  uint64_t expected =
      static_cast<uint64_t>(numElements(*shape)) * dtypeSize(*dtype);
  if (expected != static_cast<uint64_t>(*bytes))
    return Status::error(strCat("holds ", *bytes, " bytes but ",
                                dtypeName(*dtype), shapeToString(*shape),
                                " needs ", expected));
  if (*bytes == 0)
    return Tensor::empty(*dtype, *shape);
  KILN_RETURN_IF_ERROR(load());
  uint64_t off = static_cast<uint64_t>(*offset);
  if (off > size_ || static_cast<uint64_t>(*bytes) > size_ - off)
    return Status::error(strCat("offset ", off, " + ", *bytes,
                                " bytes is past the end of ", path_, " (",
                                size_, " bytes)"));
  size_t elem = dtypeSize(*dtype);
  if (off % elem == 0)
    return Tensor(storage_, *dtype, *shape, contiguousStrides(*shape),
                  static_cast<int64_t>(off / elem));
  Tensor t = Tensor::empty(*dtype, *shape);
  std::memcpy(t.rawData(), static_cast<const char *>(storage_->data()) + off,
              static_cast<size_t>(*bytes));
  return t;
}

/// Reads the program's value ids and everything built from them.
class ProgramReader {
public:
  /// `jsonBytes`: the size of program.json, which bounds the number of
  /// values a well-formed program can have.
  ProgramReader(BinReader &bin, size_t jsonBytes)
      : bin_(bin), jsonBytes_(jsonBytes) {}

  Expected<Program> read(const Json &root);

private:
  Expected<int> valueId(const Json &j, const std::string &what) const;
  Expected<std::vector<int>> valueIds(const Json &node, const char *key) const;
  Status readSignatures(const Json &root, const char *key,
                        std::vector<ValueSignature> &out) const;
  Expected<AttrValue> readAttribute(const Json &j);
  Status readNodes(const Json &list, const std::string &where, int depth,
                   std::vector<ProgramNode> &out);
  Status readNode(const Json &j, int depth, ProgramNode &node);

  BinReader &bin_;
  size_t jsonBytes_;
  int numValues_ = 0;
};

Expected<int> ProgramReader::valueId(const Json &j,
                                     const std::string &what) const {
  Expected<int64_t> id = getInt64(j, what);
  if (!id)
    return id.status();
  if (*id < 0 || *id >= numValues_)
    return Status::error(strCat(what, " ", *id,
                                " is not a value id (the "
                                "program has ",
                                numValues_, " values)"));
  return static_cast<int>(*id);
}

Expected<std::vector<int>> ProgramReader::valueIds(const Json &node,
                                                   const char *key) const {
  const Json *list = findKey(node, key);
  if (!list)
    return std::vector<int>();
  if (!list->is_array())
    return Status::error(strCat("'", key, "' must be an array of value ids"));
  std::vector<int> ids;
  for (size_t i = 0; i < list->size(); ++i) {
    Expected<int> id = valueId((*list)[i], strCat("'", key, "'[", i, "]"));
    if (!id)
      return id.status();
    ids.push_back(*id);
  }
  return ids;
}

Status ProgramReader::readSignatures(const Json &root, const char *key,
                                     std::vector<ValueSignature> &out) const {
  const Json *list = findKey(root, key);
  if (!list)
    return Status::ok();
  if (!list->is_array())
    return Status::error(strCat("'", key, "' must be an array"));
  for (size_t i = 0; i < list->size(); ++i) {
    const Json &j = (*list)[i];
    ValueSignature sig;
    auto fail = [&](const Status &s) {
      std::string label = strCat(key, "[", i, "]");
      if (!sig.name.empty())
        label += strCat(" ('", sig.name, "')");
      return s.withContext(label);
    };
    if (!j.is_object())
      return fail(Status::error("expected an object with name, dtype, shape "
                                "and value_id"));
    Expected<std::string> name = getString(j, "name");
    if (!name)
      return fail(name.status());
    sig.name = name.take();
    Expected<const Json *> dtypeJ = requireKey(j, "dtype");
    if (!dtypeJ)
      return fail(dtypeJ.status());
    Expected<DType> dtype = getDType(**dtypeJ, "'dtype'");
    if (!dtype)
      return fail(dtype.status());
    sig.dtype = *dtype;
    Expected<const Json *> shapeJ = requireKey(j, "shape");
    if (!shapeJ)
      return fail(shapeJ.status());
    Expected<Shape> shape = getShape(**shapeJ, true);
    if (!shape)
      return fail(shape.status());
    sig.shape = shape.take();
    if (const Json *names = findKey(j, "dim_names")) {
      if (!names->is_array() || names->size() > sig.shape.size())
        return fail(Status::error(
            "'dim_names' must be an array of at most one name per dimension"));
      for (const Json &n : *names) {
        if (!n.is_string())
          return fail(Status::error("'dim_names' must hold strings"));
        sig.dimNames.push_back(n.get<std::string>());
      }
    }
    Expected<const Json *> idJ = requireKey(j, "value_id");
    if (!idJ)
      return fail(idJ.status());
    Expected<int> id = valueId(**idJ, "'value_id'");
    if (!id)
      return fail(id.status());
    sig.valueId = *id;
    if (const Json *anyRank = findKey(j, "any_rank")) {
      if (!anyRank->is_boolean() || (anyRank->get<bool>() && !sig.shape.empty()))
        return fail(Status::error(
            "'any_rank' must be a boolean, true only with an empty 'shape'"));
      sig.anyRank = anyRank->get<bool>();
    }
    out.push_back(std::move(sig));
  }
  return Status::ok();
}

Expected<AttrValue> ProgramReader::readAttribute(const Json &j) {
  if (!j.is_object())
    return Status::error("must be an object with 'kind' and 'value'");
  Expected<std::string> kind = getString(j, "kind");
  if (!kind)
    return kind.status();
  Expected<const Json *> valueJ = requireKey(j, "value");
  if (!valueJ)
    return valueJ.status();
  const Json &v = **valueJ;
  if (*kind == "int") {
    Expected<int64_t> i = getInt64(v, "the value");
    if (!i)
      return i.status();
    return AttrValue(*i);
  }
  if (*kind == "float") {
    Expected<double> d = decodeDouble(v);
    if (!d)
      return d.status();
    return AttrValue(*d);
  }
  if (*kind == "string") {
    if (!v.is_string())
      return Status::error("the value of a string attribute must be a string");
    return AttrValue(v.get<std::string>());
  }
  if (*kind == "ints" || *kind == "floats") {
    if (!v.is_array())
      return Status::error(
          strCat("the value of an ", *kind, " attribute must be an array"));
    if (*kind == "ints") {
      std::vector<int64_t> ints;
      for (size_t i = 0; i < v.size(); ++i) {
        Expected<int64_t> x = getInt64(v[i], strCat("element ", i));
        if (!x)
          return x.status();
        ints.push_back(*x);
      }
      return AttrValue(std::move(ints));
    }
    std::vector<double> floats;
    for (size_t i = 0; i < v.size(); ++i) {
      Expected<double> x = decodeDouble(v[i]);
      if (!x)
        return x.status().withContext(strCat("element ", i));
      floats.push_back(*x);
    }
    return AttrValue(std::move(floats));
  }
  if (*kind == "dtype") {
    Expected<DType> t = getDType(v, "the value of a dtype attribute");
    if (!t)
      return t.status();
    return AttrValue(*t);
  }
  if (*kind == "tensor") {
    Expected<Tensor> t = bin_.tensor(v, true);
    if (!t)
      return t.status();
    return AttrValue(t.take());
  }
  return Status::error(strCat("unknown attribute kind '", *kind,
                              "' (expected int, float, string, ints, floats, "
                              "dtype or tensor)"));
}

Status ProgramReader::readNodes(const Json &list, const std::string &where,
                                int depth, std::vector<ProgramNode> &out) {
  if (!list.is_array())
    return Status::error(strCat("'", where, "' must be an array of nodes"));
  for (size_t n = 0; n < list.size(); ++n) {
    ProgramNode node;
    Status s = readNode(list[n], depth, node);
    if (!s) {
      std::string label = strCat(where, "[", n, "]");
      if (!node.sourceName.empty())
        label += strCat(" ('", node.sourceName, "')");
      return s.withContext(label);
    }
    out.push_back(std::move(node));
  }
  return Status::ok();
}

Status ProgramReader::readNode(const Json &j, int depth, ProgramNode &node) {
  if (!j.is_object())
    return Status::error("a node must be an object");
  Expected<std::string> sourceName = getString(j, "source_name", true);
  if (!sourceName)
    return sourceName.status();
  node.sourceName = sourceName.take();
  Expected<std::string> op = getString(j, "op");
  if (!op)
    return op.status();
  if (op->empty())
    return Status::error("'op' is empty");
  node.op = op.take();
  Expected<std::string> sourceOp = getString(j, "source_op", true);
  if (!sourceOp)
    return sourceOp.status();
  node.sourceOp = sourceOp.take();
  Expected<std::vector<int>> operands = valueIds(j, "operands");
  if (!operands)
    return operands.status();
  node.operands = operands.take();
  Expected<std::vector<int>> results = valueIds(j, "results");
  if (!results)
    return results.status();
  node.results = results.take();
  if (const Json *attrs = findKey(j, "attributes")) {
    if (!attrs->is_object())
      return Status::error("'attributes' must be an object");
    for (auto it = attrs->begin(); it != attrs->end(); ++it) {
      Expected<AttrValue> value = readAttribute(it.value());
      if (!value)
        return value.status().withContext(strCat("attribute '", it.key(), "'"));
      node.attrs.set(it.key(), value.take());
    }
  }
  if (const Json *regions = findKey(j, "regions")) {
    if (!regions->is_array())
      return Status::error("'regions' must be an array");
    if (!regions->empty() && depth >= kMaxRegionDepth)
      return Status::error(
          strCat("regions are nested more than ", kMaxRegionDepth, " deep"));
    for (size_t r = 0; r < regions->size(); ++r) {
      const Json &rj = (*regions)[r];
      std::string label = strCat("regions[", r, "]");
      if (!rj.is_object())
        return Status::error(strCat(label, " must be an object"));
      ProgramRegion region;
      Expected<std::vector<int>> args = valueIds(rj, "arguments");
      if (!args)
        return args.status().withContext(label);
      region.arguments = args.take();
      Expected<std::vector<int>> res = valueIds(rj, "results");
      if (!res)
        return res.status().withContext(label);
      region.results = res.take();
      if (const Json *nodes = findKey(rj, "nodes"))
        KILN_RETURN_IF_ERROR(readNodes(*nodes, strCat(label, ".nodes"),
                                       depth + 1, region.nodes));
      node.regions.push_back(std::move(region));
    }
  }
  return Status::ok();
}

Expected<Program> ProgramReader::read(const Json &root) {
  if (!root.is_object())
    return Status::error("the top level is not a JSON object");
  Expected<std::string> format = getString(root, "format");
  if (!format)
    return format.status();
  if (*format != "kiln-program")
    return Status::error(
        strCat("'format' is '", *format, "', expected 'kiln-program'"));
  Expected<const Json *> versionJ = requireKey(root, "version");
  if (!versionJ)
    return versionJ.status();
  Expected<int64_t> version = getInt64(**versionJ, "'version'");
  if (!version)
    return version.status();
  if (*version != kProgramFormatVersion)
    return Status::error(strCat("format version ", *version,
                                " is not supported (this runtime reads "
                                "version ",
                                kProgramFormatVersion,
                                "; recompile the model with this kiln)"));
  Expected<const Json *> numJ = requireKey(root, "num_values");
  if (!numJ)
    return numJ.status();
  Expected<int64_t> num = getInt64(**numJ, "'num_values'");
  if (!num)
    return num.status();
  // Every value id is written at least once (a few characters), so a count
  // far above the file's size is corrupt; it would size every run's value
  // table.
  if (*num < 0 || *num > std::numeric_limits<int>::max() ||
      static_cast<uint64_t>(*num) > jsonBytes_ + 1024)
    return Status::error(strCat("'num_values' ", *num,
                                " is out of range for a program of ",
                                jsonBytes_, " bytes"));
  Program program;
  program.numValues = numValues_ = static_cast<int>(*num);
  KILN_RETURN_IF_ERROR(readSignatures(root, "inputs", program.inputs));
  KILN_RETURN_IF_ERROR(readSignatures(root, "weights", program.weights));
  KILN_RETURN_IF_ERROR(readSignatures(root, "outputs", program.outputs));
  if (const Json *graphs = findKey(root, "graphs")) {
    if (!graphs->is_array())
      return Status::error("'graphs' must be an array of names");
    for (const Json &g : *graphs) {
      if (!g.is_string())
        return Status::error("'graphs' must be an array of names");
      program.graphs.push_back(g.get<std::string>());
    }
  }
  if (const Json *constants = findKey(root, "constants")) {
    if (!constants->is_array())
      return Status::error("'constants' must be an array");
    for (size_t i = 0; i < constants->size(); ++i) {
      const Json &c = (*constants)[i];
      std::string label = strCat("constants[", i, "]");
      if (!c.is_object())
        return Status::error(strCat(label, " must be an object with "
                                           "value_id and tensor"));
      Expected<const Json *> idJ = requireKey(c, "value_id");
      if (!idJ)
        return idJ.status().withContext(label);
      Expected<int> id = valueId(**idJ, "'value_id'");
      if (!id)
        return id.status().withContext(label);
      label += strCat(" (value %", *id, ")");
      if (program.constants.count(*id))
        return Status::error(strCat(label, ": a second constant for the "
                                           "same value"));
      Expected<const Json *> tensorJ = requireKey(c, "tensor");
      if (!tensorJ)
        return tensorJ.status().withContext(label);
      Expected<Tensor> t = bin_.tensor(**tensorJ, false);
      if (!t)
        return t.status().withContext(label);
      program.constants[*id] = t.take();
    }
  }
  if (const Json *nodes = findKey(root, "nodes"))
    KILN_RETURN_IF_ERROR(readNodes(*nodes, "nodes", 0, program.nodes));
  return program;
}


} // namespace

Expected<Program> readProgramFiles(const std::string &dir) {
  std::string jsonPath = joinPath(dir, "program.json");
  std::ifstream in(jsonPath, std::ios::binary);
  if (!in)
    return Status::error(strCat(jsonPath,
                                ": cannot open the program (is the folder a "
                                "program written by kiln?)"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  Json root;
  try {
    root = Json::parse(buffer.str());
  } catch (const Json::exception &e) {
    return Status::error(strCat(jsonPath, ": not valid JSON: ", e.what()));
  }
  BinReader bin(joinPath(dir, "program.bin"));
  ProgramReader reader(bin, buffer.str().size());
  try {
    Expected<Program> program = reader.read(root);
    if (!program)
      return program.status().withContext(jsonPath);
    return program;
  } catch (const Json::exception &e) {
    return Status::error(strCat(jsonPath, ": malformed program: ", e.what()));
  } catch (const std::bad_alloc &) {
    return Status::error(strCat(jsonPath, ": out of memory reading it"));
  }
}

} // namespace kiln
