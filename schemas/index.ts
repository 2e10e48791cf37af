// Every shared schema, registered once with addSchema by plugins/schemas.ts.
import { ErrorSchema } from './common'
import { DataSourcesSchema, HealthSchema } from './health'
import { CveDetailSchema, FindingDecisionSchema, DistributionEvidenceSchema, PackageEvidenceSchema, EpssSchema, FindingSchema, KevSchema, PageFindingSchema } from './finding'
import { HostBriefSchema, HostPortBriefSchema, HostPortSchema, HostSchema, PageHostSchema, TlsInfoSchema } from './host'
import { ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeyPatchSchema, PageApiKeySchema, ApiKeySchema, RoleSchema } from './key'
import { HostTagsPatchSchema, HostTagsSchema, TagSchema } from './tags'
import { AuditEntrySchema, PageAuditEntrySchema, PageRefusedCountSchema, RefusedCountSchema } from './audit'
import { WebhookUrlSchema, PageWebhookDeliverySchema, PageWebhookSchema, SlackMessageSchema, WebhookCreatedSchema, WebhookCreateSchema, WebhookDeliverySchema, WebhookEventSchema, WebhookFilterSchema, WebhookPatchSchema, WebhookRedeliverySchema, WebhookSchema } from './webhook'
import { CronExpressionSchema, TimeZoneSchema, PageScheduleSchema, ScheduleCreateSchema, ScheduledScanSchema, SchedulePatchSchema, ScheduleSchema } from './schedule'
import { DiffFindingSchema, DiffHostSchema, DiffPortSchema, ScanDiffSchema, ServiceChangeSchema, ServiceVersionSchema } from './scan-diff'
import {
  PageScanSchema, ScanAckSchema, ScanOptionsSchema, ScanProgressSchema, ScanRequestSchema, ScanSchema,
  ScanStatusSchema, ScanSummarySchema, TargetSchema
} from './scan'
import { ReportLinkRequestSchema, ReportLinkSchema, ScanReportSchema } from './report'
import { RefusedTemplateSchema, TemplateInfoSchema, TemplateListSchema } from './template'
import { IntegrationCreateSchema, IntegrationDeliverySchema, IntegrationFilterSchema, IntegrationPatchSchema, IntegrationSchema, IntegrationSyncAckSchema, PageIntegrationDeliverySchema, PageIntegrationSchema } from './integration'
import { CredentialCreateSchema, CredentialRotationSchema, CredentialPatchSchema, CredentialSchema, PageCredentialSchema, PinnedHostKeySchema } from './credential'

export const sharedSchemas = [
  ErrorSchema, DataSourcesSchema, HealthSchema,
  TargetSchema, ScanOptionsSchema, ScanRequestSchema, ScanAckSchema, ScanStatusSchema, ScanProgressSchema,
  ScanSummarySchema, ScanSchema, PageScanSchema, ScanReportSchema, ReportLinkRequestSchema, ReportLinkSchema,
  TagSchema, HostTagsSchema, HostTagsPatchSchema,
  TlsInfoSchema, HostPortSchema, HostSchema, HostPortBriefSchema, HostBriefSchema, PageHostSchema,
  KevSchema, EpssSchema, DistributionEvidenceSchema, PackageEvidenceSchema, FindingSchema, PageFindingSchema, FindingDecisionSchema, CveDetailSchema,
  RoleSchema, ApiKeySchema, ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeyPatchSchema, PageApiKeySchema,
  AuditEntrySchema, PageAuditEntrySchema, RefusedCountSchema, PageRefusedCountSchema,
  CronExpressionSchema, TimeZoneSchema, ScheduledScanSchema, ScheduleCreateSchema, SchedulePatchSchema, ScheduleSchema, PageScheduleSchema,
  WebhookUrlSchema, WebhookFilterSchema, WebhookCreateSchema, WebhookPatchSchema, WebhookSchema, WebhookCreatedSchema, PageWebhookSchema,
  WebhookDeliverySchema, PageWebhookDeliverySchema, WebhookEventSchema, SlackMessageSchema, WebhookRedeliverySchema,
  ServiceVersionSchema, DiffFindingSchema, DiffPortSchema, ServiceChangeSchema, DiffHostSchema, ScanDiffSchema,
  PinnedHostKeySchema, CredentialCreateSchema, CredentialPatchSchema, CredentialSchema, PageCredentialSchema, CredentialRotationSchema,
  TemplateInfoSchema, RefusedTemplateSchema, TemplateListSchema,
  IntegrationFilterSchema, IntegrationCreateSchema, IntegrationPatchSchema, IntegrationSchema, PageIntegrationSchema, IntegrationDeliverySchema, PageIntegrationDeliverySchema, IntegrationSyncAckSchema
]
