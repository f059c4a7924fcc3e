{
  'targets': [
    {
      'target_name': 'binding',
      'sources': [ 'binding.cc' ],
      'includes': ['../common.gypi'],
    },
    {
      'target_name': 'napi_binding',
      'sources': [ 'napi_binding.c' ],
      'includes': ['../common.gypi'],
    }
  ]
}
