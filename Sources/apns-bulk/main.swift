import APNSBulkCLI

APNSBulkCommand.main()
