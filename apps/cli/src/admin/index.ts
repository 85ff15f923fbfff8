export { ADMIN_USAGE, runAdminCommand } from './admin-command';
