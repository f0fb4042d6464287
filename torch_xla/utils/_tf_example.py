"""tf.train.Example, parsed by protobuf without TensorFlow.

The message types of TensorFlow's example.proto and feature.proto are declared here as a
descriptor (field names and numbers are the wire format, so they must not change) and
built into classes in a private descriptor pool, which cannot clash with TensorFlow's
own classes when both are imported.
"""

import numpy as np
import torch
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_PACKAGE = 'tensorflow'
_F = descriptor_pb2.FieldDescriptorProto


def _field(message, name, number, kind, label=_F.LABEL_OPTIONAL, type_name=None, oneof=None):
  field = message.field.add(name=name, number=number, type=kind, label=label)
  if type_name:
    field.type_name = f'.{_PACKAGE}.{type_name}'
  if oneof is not None:
    field.oneof_index = oneof
  return field


def _map_field(message, name, number, value_type):
  """A map<string, value_type> field: a repeated nested entry message, as protoc makes it."""
  entry = message.nested_type.add(name=''.join(part.title() for part in name.split('_')) + 'Entry')
  entry.options.map_entry = True
  _field(entry, 'key', 1, _F.TYPE_STRING)
  _field(entry, 'value', 2, _F.TYPE_MESSAGE, type_name=value_type)
  _field(message, name, number, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, type_name=f'{message.name}.{entry.name}')


def _build_classes():
  proto = descriptor_pb2.FileDescriptorProto(name='torch_xla/tf_example.proto', package=_PACKAGE,
                                             syntax='proto3')
  for name, kind in (('BytesList', _F.TYPE_BYTES), ('FloatList', _F.TYPE_FLOAT), ('Int64List', _F.TYPE_INT64)):
    _field(proto.message_type.add(name=name), 'value', 1, kind, _F.LABEL_REPEATED)  # proto3: packed
  feature = proto.message_type.add(name='Feature')
  feature.oneof_decl.add(name='kind')
  _field(feature, 'bytes_list', 1, _F.TYPE_MESSAGE, type_name='BytesList', oneof=0)
  _field(feature, 'float_list', 2, _F.TYPE_MESSAGE, type_name='FloatList', oneof=0)
  _field(feature, 'int64_list', 3, _F.TYPE_MESSAGE, type_name='Int64List', oneof=0)
  _map_field(proto.message_type.add(name='Features'), 'feature', 1, 'Feature')
  _field(proto.message_type.add(name='FeatureList'), 'feature', 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
         type_name='Feature')
  _map_field(proto.message_type.add(name='FeatureLists'), 'feature_list', 1, 'FeatureList')
  _field(proto.message_type.add(name='Example'), 'features', 1, _F.TYPE_MESSAGE, type_name='Features')
  sequence = proto.message_type.add(name='SequenceExample')
  _field(sequence, 'context', 1, _F.TYPE_MESSAGE, type_name='Features')
  _field(sequence, 'feature_lists', 2, _F.TYPE_MESSAGE, type_name='FeatureLists')

  pool = descriptor_pool.DescriptorPool()
  pool.Add(proto)
  return {m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f'{_PACKAGE}.{m.name}'))
          for m in proto.message_type}


_CLASSES = _build_classes()
Example = _CLASSES['Example']
Feature = _CLASSES['Feature']
SequenceExample = _CLASSES['SequenceExample']


def _bytes_tensor(value):
  return torch.from_numpy(np.frombuffer(value, dtype=np.uint8).copy())


def feature_to_tensor(feature):
  """A Feature's values: float32 or int64 tensors, a uint8 tensor for one bytes value and
  a list of them for several."""
  kind = feature.WhichOneof('kind')
  if kind == 'float_list':
    return torch.from_numpy(np.asarray(feature.float_list.value, dtype=np.float32))
  if kind == 'int64_list':
    return torch.from_numpy(np.asarray(feature.int64_list.value, dtype=np.int64))
  if kind == 'bytes_list':
    values = feature.bytes_list.value
    return _bytes_tensor(values[0]) if len(values) == 1 else [_bytes_tensor(v) for v in values]
  return torch.empty(0)  # a feature with no values


def parse_example(record):
  """The features of a serialized tf.train.Example, by name."""
  example = Example()
  example.ParseFromString(record)
  return {name: feature_to_tensor(feature) for name, feature in example.features.feature.items()}
