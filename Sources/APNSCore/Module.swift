// APNSCore: module placeholder.
